"""The reference side of Benchmarks/whole-job/run.sh: the contract's outcomes in DuckDB SQL
(contract.sql) over a raw tree, into a new database file. Prints one JSON line: the outcome
counts. Usage: duckdb_job.py TREE DATABASE"""
import json
import os
import sys

import duckdb

tree, database = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sql = open(os.path.join(here, "contract.sql")).read()
sql = sql.replace("${SENDER}", os.path.join(tree, "sender", "**", "*.jsonl*"))
sql = sql.replace("${DEVICES}", os.path.join(tree, "devices", "**", "*.jsonl*"))
con = duckdb.connect(database)
# Comments out (they hold semicolons), then one statement at a time; the last one's rows are the answer.
sql = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
rows = None
for statement in (s for s in sql.split(";") if s.strip()):
    rows = con.execute(statement).fetchall()
con.close()
print(json.dumps({outcome: count for outcome, count in rows}, sort_keys=True))
