"""Feedback turns of natural-task sessions (turn 0 by the model, failed hidden): after a turn whose
public tests all passed vs one with a failing public test, the next reply unchanged or changed."""

import sys
from collections import Counter

from assistant.messages.extract import same_code
from assistant.store.trajectory_db import Store

db, source, models = sys.argv[1], sys.argv[2], sys.argv[3:]
st = Store(db)
for m in models:
    c = Counter()
    for s in st.sessions(model=m, source=source):
        turns = st.turns(s.id)
        if "repair" in (s.meta or {}) or len(turns) < 2 or s.status == "model_error":
            continue
        if turns[0].author != "model" or turns[0].passed_hidden:
            continue
        for t in range(1, len(turns)):
            prev = "public all passed" if turns[t - 1].public_pass_rate == 1.0 else "a public test failed"
            a, b = turns[t - 1].program, turns[t].program
            kind = "no code" if not b else ("unchanged" if a and same_code(b, a) else "changed")
            c[(t, prev, kind)] += 1
    print(m)
    for k in sorted(c):
        print("  turn %d after %-22s %-9s %3d" % (*k, c[k]))
