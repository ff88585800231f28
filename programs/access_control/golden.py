#!/usr/bin/env python3
"""Golden outputs for programs/access_control, computed without the engine.

Method 1: plain Python (fixpoints for role inheritance and permission
implication, then set comprehensions for the negations).
Method 2: the same rules solved by clingo.
The two must agree; the result is written to expected/.
"""
import functools
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))            # programs/: golden_common
import golden_common  # noqa: E402

read_facts = functools.partial(golden_common.read_facts, HERE)
write_outputs = functools.partial(golden_common.write_outputs, HERE)
clingo_model = golden_common.clingo_model


# ---------------------------------------------------------------- method 1
IMPLIES = {("write", "read"), ("approve", "read"), ("delete", "write")}


def fixpoint(rows, step):
    rows = set(rows)
    while True:
        new = step(rows) - rows
        if not new:
            return rows
        rows |= new


def compute_python(f):
    has_role = fixpoint(f["user_role"], lambda hr: {
        (u, r2) for (u, r) in hr for (r1, r2) in f["inherits"] if r1 == r})
    role_perm = fixpoint(f["grant"], lambda rp: {
        (r, q, res) for (r, p, res) in rp for (p1, q) in IMPLIES if p1 == p})
    suspended = {u for (u,) in f["suspended"]}
    can = {(u, p, res)
           for (u, r) in has_role for (r2, p, res) in role_perm
           if r == r2 and (u, p, res) not in f["revoked"] and u not in suspended}
    users_with_access = {u for (u, _, _) in can}
    return {
        "can": can,
        "payroll_readers": {(u,) for (u, p, res) in can if (p, res) == ("read", "payroll")},
        "no_access": {(u,) for (u,) in f["user"] if u not in users_with_access},
        "sod_violation": {(u, res) for (u, p, res) in can
                          if p == "write" and (u, "approve", res) in can},
        "prod_access": {(u,) for (u, p, res) in can
                        if (p, res) in {("deploy", "production"), ("write", "prod_db")}},
        "role_count": {(u, len({r for (v, r) in has_role if v == u})) for (u,) in f["user"]},
        "suspended_with_access": {(u,) for (u, _, _) in can if u in suspended},
    }


# ---------------------------------------------------------------- method 2
ASP = """
implies("write", "read"). implies("approve", "read"). implies("delete", "write").
has_role(U, R) :- user_role(U, R).
has_role(U, R2) :- has_role(U, R), inherits(R, R2).
role_perm(R, P, Res) :- grant(R, P, Res).
role_perm(R, Q, Res) :- role_perm(R, P, Res), implies(P, Q).
can(U, P, Res) :- has_role(U, R), role_perm(R, P, Res), not revoked(U, P, Res), not suspended(U).
can_access(U, Res) :- can(U, _, Res).
payroll_readers(U) :- can(U, "read", "payroll").
any_access(U) :- can_access(U, _).
no_access(U) :- user(U), not any_access(U).
sod_violation(U, Res) :- can(U, "write", Res), can(U, "approve", Res).
prod_access(U) :- can(U, "deploy", "production").
prod_access(U) :- can(U, "write", "prod_db").
role_count(U, N) :- user(U), N = #count { R : has_role(U, R) }.
suspended_with_access(U) :- suspended(U), can(U, _, _).
#show can/3. #show payroll_readers/1. #show no_access/1.
#show sod_violation/2. #show prod_access/1. #show role_count/2.
#show suspended_with_access/1.
"""

TYPES = {"user": "s", "user_role": "ss", "inherits": "ss", "grant": "sss",
         "revoked": "sss", "suspended": "s"}


def main():
    facts = {name: read_facts(name, t) for name, t in TYPES.items()}
    py = compute_python(facts)
    asp = clingo_model(ASP, facts)
    for rel in py:
        assert py[rel] == asp.get(rel, set()), f"python and clingo disagree on {rel}"
    write_outputs(py)
    for rel, rows in py.items():
        print(f"{rel}: {len(rows)} rows")


if __name__ == "__main__":
    main()
