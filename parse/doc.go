// Package parse opens an input file, recognises its format from its first
// bytes (gzip or plain JSON: a Chrome trace; "SQLite format 3": an nsys
// export), and hands it to the parser for that format.
package parse
