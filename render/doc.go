// Package render formats analysis results as text, markdown, CSV and JSON
// tables. It computes nothing: every number comes from package analyze.
//
// How numbers print (milliseconds, shares) is defined in
// docs/definitions.md#times; the JSON documents (json.go) are described in
// docs/json.md.
package render
