// Package parse reads the inputs of a command line. Expand turns the
// arguments into files, grouped by argument (a directory is a group: its
// trace files, with what else it holds skipped); File and Read open each
// input once, recognise its format from its first bytes (gzip or plain
// JSON: a Chrome trace; "SQLite format 3", plain or gzipped: an nsys
// export) and hand it to the parser for that format. Every error about a
// file is a *FileError naming it once.
package parse
