"""Benchmarks, one module per `cobalt bench TARGET`; they import the library, nothing imports them."""
