"""Problems: the schema, the loaders of a PROBLEM argument and of published sets, splits."""
