"""Only the load of Benchmarks/whole-job/run.sh's reference: contract.sql's first two statements
(read_json of the sender and device trees into tables), into a new DuckDB file, to compare with
`arrival ingest` of the same tree on many small files. Prints the two tables' row counts.
Usage: duckdb_load.py TREE DATABASE"""
import os
import sys

import duckdb

tree, database = sys.argv[1], sys.argv[2]
here = os.path.dirname(os.path.abspath(__file__))
sql = open(os.path.join(here, "contract.sql")).read()
sql = sql.replace("${SENDER}", os.path.join(tree, "sender", "**", "*.jsonl*"))
sql = sql.replace("${DEVICES}", os.path.join(tree, "devices", "**", "*.jsonl*"))
sql = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
con = duckdb.connect(database)
for statement in [s for s in sql.split(";") if s.strip()][:2]:
    con.execute(statement)
print(con.execute("SELECT (SELECT count(*) FROM raw_apns), (SELECT count(*) FROM raw_device)").fetchall())
con.close()
