package duckdb

import "flag"

var update = flag.Bool("update", false, "rewrite the query outputs in docs/fleet.md")
