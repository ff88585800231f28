# %% [markdown]
# # A change stream from a DataFrame
#
# A notebook-style example (cells marked `# %%`: Jupytext, VS Code and PyCharm open the file as a
# notebook; `python programs/notebook_stream/example.py` runs it whole, and the tests run it).
# Routes between sites come in as a pandas DataFrame; the program derives which sites each site
# reaches through open sites only; a subscription follows that output while routes are added,
# a site is closed and a route is dropped, and the stream shows each commit's rows with their
# weight (+1 in, -1 out), as a downstream job would take them.

# %%
import pandas as pd
import rich

from datalog import Engine

PROGRAM = """
.decl route(src: symbol, dst: symbol)
.decl closed(site: symbol)
.decl reaches(src: symbol, dst: symbol)
reaches(x, y) :- route(x, y), !closed(x), !closed(y).
reaches(x, z) :- reaches(x, y), route(y, z), !closed(z).
"""

routes = pd.DataFrame({"src": ["berlin", "hamburg", "munich", "berlin"],
                       "dst": ["hamburg", "munich", "vienna", "prague"]})
engine = Engine.from_source(PROGRAM)
engine.insert("route", routes)                      # columns matched by name
engine.run()
rich.print(engine.relation("reaches"))              # in Jupyter, the relation shows as an HTML table

# %% [markdown]
# Subscribe to `reaches`: the first change is its current rows (all +1), then one per commit.

# %%
stream = []
subscription = engine.subscribe("reaches", stream.append)

with engine.transaction() as tx:                    # new routes, from a DataFrame
    tx.insert("route", pd.DataFrame({"src": ["vienna", "prague"], "dst": ["budapest", "vienna"]}))
engine.commit(inserts={"closed": [("munich",)]})    # a site closes
engine.commit(retracts={"route": [("berlin", "prague")]})
engine.commit(inserts={"route": [("berlin", "hamburg")]})   # already there: no change, nothing delivered

# %% [markdown]
# The stream: each commit's change as a table with a `weight` column.

# %%
frames = [change.to_pandas().assign(commit=change.commit) for change in stream]
changes = pd.concat(frames, ignore_index=True)
print(changes.to_string(index=False))

# %% [markdown]
# The weights of each row add up to the relation as it is now.

# %%
totals = changes.groupby(["src", "dst"])["weight"].sum()
now = engine.relation("reaches").to_pandas()
assert sorted(totals[totals != 0].index) == sorted(zip(now["src"], now["dst"]))
print(f"{len(stream)} changes, {len(changes)} rows; reaches holds {len(now)} rows")
