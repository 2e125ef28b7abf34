package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/traceq/traceq/analyze"
	"github.com/traceq/traceq/classify"
	"github.com/traceq/traceq/collectives"
	"github.com/traceq/traceq/efficiency"
	"github.com/traceq/traceq/findings"
	"github.com/traceq/traceq/settings"
	"github.com/traceq/traceq/stats"
	"github.com/traceq/traceq/trace"
	"github.com/traceq/traceq/window"
)

// This file holds the JSON documents traceq writes: the scripting contract
// (docs/json.md). They are separate from the analysis types on purpose, so
// that an internal change cannot rename, drop or retype a field. Fields
// are only ever added.

// writeJSON writes v as encoding/json's Encoder does with a two-space
// indent and no HTML escaping, byte for byte, but a document's top-level
// fields one at a time and the elements of a top-level array one at a
// time (streamJSON): a document of 100k kernels of 2 KB names is 230 MB
// of JSON, which the Encoder builds whole, twice (compact, then
// indented), before writing (1 GB peak, issue 19 item 15).
func writeJSON(w io.Writer, v any) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := streamJSON(bw, reflect.ValueOf(v)); err != nil {
		return err
	}
	return bw.Flush()
}

// streamJSON writes a struct document field by field; any other value,
// or a struct whose fields it does not know to lay out as encoding/json
// does (embedded fields, tag options but omitempty, a Marshaler), whole.
func streamJSON(w *bufio.Writer, v reflect.Value) error {
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	fields, ok := docFields(v)
	if !ok {
		return encodeJSON(w, v.Interface(), "")
	}
	first := true
	for _, f := range fields {
		fv := v.Field(f.index)
		if f.omitEmpty && emptyJSON(fv) {
			continue
		}
		if first {
			w.WriteString("{\n")
		} else {
			w.WriteString(",\n")
		}
		first = false
		name, err := json.Marshal(f.name)
		if err != nil {
			return err
		}
		w.WriteString("  ")
		w.Write(name)
		w.WriteString(": ")
		if err := streamField(w, fv); err != nil {
			return err
		}
	}
	if first {
		w.WriteString("{}\n")
		return nil
	}
	w.WriteString("\n}\n")
	return nil
}

// streamField writes a top-level field's value: an array element by
// element, anything else whole.
func streamField(w *bufio.Writer, v reflect.Value) error {
	if (v.Kind() != reflect.Slice && v.Kind() != reflect.Array) || v.Kind() == reflect.Slice && v.IsNil() ||
		v.Len() == 0 || v.Type().Elem().Kind() == reflect.Uint8 || v.Type().Implements(marshalerType) {
		return encodeJSON(w, v.Interface(), "  ")
	}
	w.WriteString("[\n")
	for i := range v.Len() {
		if i > 0 {
			w.WriteString(",\n")
		}
		w.WriteString("    ")
		if err := encodeJSON(w, v.Index(i).Interface(), "    "); err != nil {
			return err
		}
	}
	w.WriteString("\n  ]")
	return nil
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// encodeJSON writes v indented as if it began at prefix, without the
// Encoder's trailing newline when prefix is set (a value inside the
// document).
func encodeJSON(w *bufio.Writer, v any, prefix string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := b.Bytes()
	if prefix != "" {
		out = bytes.TrimSuffix(out, []byte("\n"))
	}
	_, err := w.Write(out)
	return err
}

type docField struct {
	name      string
	index     int
	omitEmpty bool
}

// docFields lays out a struct's fields as encoding/json does, or says it
// cannot (ok false) and the document is written whole.
func docFields(v reflect.Value) (fields []docField, ok bool) {
	if v.Kind() != reflect.Struct || v.Type().Implements(marshalerType) || reflect.PointerTo(v.Type()).Implements(marshalerType) {
		return nil, false
	}
	t := v.Type()
	seen := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" || !validJSONName(name) {
			return nil, false
		}
		if name == "" {
			name = sf.Name
		}
		if seen[name] {
			return nil, false
		}
		seen[name] = true
		fields = append(fields, docField{name: name, index: i, omitEmpty: opts == "omitempty"})
	}
	return fields, true
}

// validJSONName: the tag names encoding/json takes as they are (letters,
// digits, _ and -); another is written whole, by encoding/json's rules.
func validJSONName(name string) bool {
	for _, c := range name {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// emptyJSON is encoding/json's omitempty test.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

type jsonInput struct {
	Path       string `json:"path"`
	Run        string `json:"run"`
	Format     string `json:"format"`
	Rank       *int   `json:"rank"`
	WorldSize  *int   `json:"world_size"`
	Activities int    `json:"activities"`
	Truncated  string `json:"truncated,omitempty"`
	// Host is the machine the input was captured on; left out when
	// unknown.
	Host string `json:"host,omitempty"`
}

func jsonInputs(ins []window.Input) []jsonInput {
	out := make([]jsonInput, len(ins))
	for i, in := range ins {
		out[i] = jsonInput{Path: in.Path, Run: in.Run, Format: string(in.Format), Rank: in.Rank, WorldSize: in.WorldSize,
			Activities: in.Activities, Truncated: in.Truncated, Host: in.Host}
	}
	return out
}

type jsonCategory struct {
	Category        string  `json:"category"`
	KernelNS        int64   `json:"kernel_ns"`
	BusyNS          int64   `json:"busy_ns"`
	Share           float64 `json:"share"`
	Instances       int64   `json:"instances"`
	KernelNSPerStep int64   `json:"kernel_ns_per_step"`
	StepShare       float64 `json:"step_share"`
}

type jsonTopKernel struct {
	Name      string  `json:"name"`
	Category  string  `json:"category"`
	Instances int64   `json:"instances"`
	TotalNS   int64   `json:"total_ns"`
	Share     float64 `json:"share"`
}

type jsonSummary struct {
	Min  int64   `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  int64   `json:"max"`
}

func jsonSum(s stats.Dist) jsonSummary {
	return jsonSummary{Min: s.Min, Mean: s.Mean, P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max}
}

type jsonCategorySummary struct {
	Category string      `json:"category"`
	KernelNS jsonSummary `json:"kernel_ns"`
}

type jsonStepStats struct {
	Count      int                   `json:"count"`
	SpanNS     jsonSummary           `json:"span_ns"`
	BusyNS     jsonSummary           `json:"busy_ns"`
	IdleNS     jsonSummary           `json:"idle_ns"`
	KernelNS   jsonSummary           `json:"kernel_ns"`
	Categories []jsonCategorySummary `json:"categories"`
	Outliers   []int                 `json:"outliers"`
	Periods    int                   `json:"periods"`
	PeriodNS   jsonSummary           `json:"period_ns"`
	GapNS      jsonSummary           `json:"gap_ns"`
	TokenSteps int                   `json:"token_steps"`
	Tokens     jsonSummary           `json:"tokens"`
	NSPerToken *float64              `json:"ns_per_token"` // null: undefined (no tokens)
}

func jsonStats(ss *analyze.StepStats) *jsonStepStats {
	if ss == nil {
		return nil
	}
	out := &jsonStepStats{Count: ss.Count, SpanNS: jsonSum(ss.SpanNS), BusyNS: jsonSum(ss.BusyNS), IdleNS: jsonSum(ss.IdleNS),
		KernelNS: jsonSum(ss.KernelNS), Outliers: ss.Outliers, Periods: ss.Periods, PeriodNS: jsonSum(ss.PeriodNS), GapNS: jsonSum(ss.GapNS),
		TokenSteps: ss.TokenSteps, Tokens: jsonSum(ss.Tokens), NSPerToken: ss.NSPerToken}
	for _, c := range ss.Categories {
		out.Categories = append(out.Categories, jsonCategorySummary{Category: c.Category.String(), KernelNS: jsonSum(c.KernelNS)})
	}
	return out
}

type jsonGroup struct {
	Path       string          `json:"path"`
	Run        string          `json:"run"`
	Rank       *int            `json:"rank"`
	PID        int64           `json:"pid"`
	Device     int32           `json:"device"`
	StepKind   string          `json:"step_kind"`
	Steps      int             `json:"steps"`
	KernelNS   int64           `json:"kernel_ns"`
	BusyNS     int64           `json:"busy_ns"`
	SpanNS     int64           `json:"span_ns"`
	IdleNS     int64           `json:"idle_ns"`
	Categories []jsonCategory  `json:"categories"`
	Top        []jsonTopKernel `json:"top"`
	StepStats  *jsonStepStats  `json:"step_stats,omitempty"`
	// Per-step figures (docs/definitions.md); the period and gap only for
	// groups of steps with a next step on the device.
	KernelNSPerStep int64    `json:"kernel_ns_per_step"`
	StepShare       float64  `json:"step_share"`
	PeriodNSP50     *float64 `json:"period_ns_p50,omitempty"`
	GapNSP50        *float64 `json:"gap_ns_p50,omitempty"`
	// Tokens per step and time per token, for steps whose markers say.
	TokensP50  *float64 `json:"tokens_p50,omitempty"`
	NSPerToken *float64 `json:"ns_per_token,omitempty"`
	// Idle time by cause (docs/definitions.md).
	Idle             jsonIdle          `json:"idle"`
	BetweenStepsNS   int64             `json:"between_steps_ns"`
	BetweenStepsGaps int               `json:"between_steps_gaps"`
	BetweenFrom      []jsonStepGap     `json:"between_steps_by_kind"`
	Launches         []jsonLaunch      `json:"launches"`
	LaunchCPUNS      int64             `json:"launch_cpu_ns"`
	Communication    jsonCommunication `json:"communication"`
	jsonRankID
}

// jsonRankID says more of a rank than path, rank and pid, each left out
// when it says nothing: its host, and what named its rank when not
// Kineto's distributedInfo (docs/json.md, "rank fields").
type jsonRankID struct {
	Host       string `json:"host,omitempty"`
	RankSource string `json:"rank_source,omitempty"`
	RankName   string `json:"rank_name,omitempty"`
}

func rankID(r *window.Rank) jsonRankID {
	j := jsonRankID{Host: r.Host, RankName: r.Name}
	if r.Number != nil && r.Source != trace.RankFromDistributedInfo && r.Source != trace.RankUnknown {
		j.RankSource = r.Source.String()
	}
	return j
}

type jsonIdle struct {
	LaunchBoundNS int64 `json:"launch_bound_ns"`
	DeviceSideNS  int64 `json:"device_side_ns"`
	UnknownNS     int64 `json:"unknown_ns"`
}

func jsonIdleOf(s window.IdleSplit) jsonIdle { return jsonIdle(s) }

type jsonStepGap struct {
	From    string `json:"from"`
	Gaps    int    `json:"gaps"`
	TotalNS int64  `json:"total_ns"`
}

type jsonLatency struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	Max int64   `json:"max"`
}

type jsonLaunch struct {
	API           string      `json:"api"`
	Calls         int64       `json:"calls"`
	CPUNS         int64       `json:"cpu_ns"`
	LaunchToStart jsonLatency `json:"launch_to_start_ns"`
}

type jsonCommunication struct {
	BusyNS    int64 `json:"busy_ns"`
	ExposedNS int64 `json:"exposed_ns"`
}

type jsonEmptyLaunch struct {
	Path  string `json:"path"`
	PID   int64  `json:"pid"`
	API   string `json:"api"`
	Calls int64  `json:"calls"`
	CPUNS int64  `json:"cpu_ns"`
}

func jsonEmptyLaunches(tbl *window.Table) []jsonEmptyLaunch {
	out := make([]jsonEmptyLaunch, len(tbl.EmptyLaunches))
	for i, e := range tbl.EmptyLaunches {
		r := &tbl.Ranks[e.Rank]
		out[i] = jsonEmptyLaunch{Path: r.Path, PID: r.PID, API: e.API, Calls: e.Calls, CPUNS: e.CPUNS}
	}
	return out
}

func jsonGroups(gs []analyze.Group) []jsonGroup {
	out := make([]jsonGroup, len(gs))
	for i, g := range gs {
		j := jsonGroup{Path: g.Rank.Path, Run: g.Rank.Run, Rank: g.Rank.Number, PID: g.Rank.PID, Device: g.Device, StepKind: g.Class.String(), Steps: g.Steps,
			KernelNS: g.KernelNS, BusyNS: g.BusyNS, SpanNS: g.SpanNS, IdleNS: g.IdleNS, StepStats: jsonStats(g.StepStats),
			KernelNSPerStep: g.KernelPerStepNS, StepShare: g.StepShare, jsonRankID: rankID(g.Rank)}
		if ss := g.StepStats; ss != nil && ss.Periods > 0 {
			p50, gap := ss.PeriodNS.P50, ss.GapNS.P50
			j.PeriodNSP50, j.GapNSP50 = &p50, &gap
		}
		if ss := g.StepStats; ss != nil && ss.TokenSteps > 0 {
			p50 := ss.Tokens.P50
			j.TokensP50, j.NSPerToken = &p50, ss.NSPerToken
		}
		for _, c := range g.Categories {
			j.Categories = append(j.Categories, jsonCategory{Category: c.Category.String(), KernelNS: c.KernelNS,
				BusyNS: c.BusyNS, Share: c.Share, Instances: c.Instances, KernelNSPerStep: c.KernelPerStepNS, StepShare: c.StepShare})
		}
		for _, k := range g.Top {
			j.Top = append(j.Top, jsonTopKernel{Name: k.Name, Category: k.Category.String(), Instances: k.Instances,
				TotalNS: k.TotalNS, Share: k.Share})
		}
		j.Idle = jsonIdleOf(g.Idle)
		j.BetweenStepsNS, j.BetweenStepsGaps, j.LaunchCPUNS = g.BetweenStepsNS, g.BetweenStepGaps, g.LaunchCPUNS
		j.BetweenFrom = []jsonStepGap{}
		for _, b := range g.BetweenFrom {
			j.BetweenFrom = append(j.BetweenFrom, jsonStepGap{From: b.From.String(), Gaps: b.Gaps, TotalNS: b.TotalNS})
		}
		j.Launches = []jsonLaunch{}
		for _, l := range g.Launches {
			j.Launches = append(j.Launches, jsonLaunch{API: l.API, Calls: l.Calls, CPUNS: l.CPUNS,
				LaunchToStart: jsonLatency{P50: l.LaunchToStart.P50, P90: l.LaunchToStart.P90, Max: l.LaunchToStart.Max}})
		}
		j.Communication = jsonCommunication(g.Comm)
		out[i] = j
	}
	return out
}

type jsonKernel struct {
	Name     string  `json:"name"`
	Category string  `json:"category"`
	N        int64   `json:"instances"`
	Total    int64   `json:"total_ns"`
	Mean     float64 `json:"avg_ns"`
	Median   float64 `json:"med_ns"`
	Min      int64   `json:"min_ns"`
	Max      int64   `json:"max_ns"`
	StdDev   float64 `json:"stddev_ns"`
	Share    float64 `json:"share"`
	Path     string  `json:"path,omitempty"`
	Device   *int32  `json:"device,omitempty"`
	// Efficiency is the name's row of the efficiency analysis (all
	// inputs), when the command ran it; per-device rows have none.
	Efficiency *jsonKernelEff `json:"efficiency,omitempty"`
}

func jsonKernels(ks []analyze.KernelStat, eff map[string]*efficiency.KernelRow) []jsonKernel {
	out := make([]jsonKernel, len(ks))
	for i, k := range ks {
		out[i] = jsonKernel{Name: k.Name, Category: k.Category.String(), N: k.N, Total: k.Total, Mean: k.Mean,
			Median: k.P50, Min: k.Min, Max: k.Max, StdDev: k.StdDev, Share: k.Share, Path: k.Path, Device: k.Device}
		if e := eff[k.Name]; e != nil && k.Device == nil {
			out[i].Efficiency = jsonKernelEfficiency(e)
		}
	}
	return out
}

type jsonRankRow struct {
	StepKind      string  `json:"step_kind"`
	Category      string  `json:"category"`
	Ranks         int     `json:"ranks"`
	TotalNS       int64   `json:"total_ns"`
	Share         float64 `json:"share"`
	MinNS         int64   `json:"min_ns"`
	MedianNS      float64 `json:"median_ns"`
	MaxNS         int64   `json:"max_ns"`
	MaxOverMedian float64 `json:"max_over_median"`
	// The slowest_* fields name the rank with the most time (max_ns).
	SlowestRank *int    `json:"slowest_rank"`
	SlowestPath string  `json:"slowest_path"`
	SlowestPID  int64   `json:"slowest_pid"`
	ByRankNS    []int64 `json:"by_rank_ns"`
	// Straggler, on communication rows, is the rank the others wait for
	// (traceq collectives); the slowest_* rank is the one that waited most.
	Straggler *jsonStraggler `json:"straggler,omitempty"`
}

// totalCategory names the all-categories row of the cross-rank table and
// of a diff.
const totalCategory = "total"

func rowCategory(total bool, c classify.Category) string {
	if total {
		return totalCategory
	}
	return c.String()
}

func jsonRanks(rows []analyze.RankRow, ct *collectives.Table) []jsonRankRow {
	out := make([]jsonRankRow, len(rows))
	for i, r := range rows {
		out[i] = jsonRankRow{StepKind: r.Class.String(), Category: rowCategory(r.Total, r.Category), Ranks: r.Ranks,
			TotalNS: r.TotalNS, Share: r.Share, MinNS: r.MinNS, MedianNS: r.MedianNS, MaxNS: r.MaxNS,
			MaxOverMedian: r.MaxOverMedian, SlowestRank: r.MaxRank.Number, SlowestPath: r.MaxRank.Path, SlowestPID: r.MaxRank.PID,
			ByRankNS: r.ByRankNS, Straggler: jsonStrag(straggler(&r, ct))}
	}
	return out
}

// jsonBreakdownDoc is the document of traceq breakdown --format json.
type jsonBreakdownDoc struct {
	Inputs    []jsonInput   `json:"inputs"`
	Groups    []jsonGroup   `json:"groups"`
	Kernels   []jsonKernel  `json:"kernels"`
	CrossRank []jsonRankRow `json:"cross_rank"`
	// EmptyLaunches are the launch calls that launched no recorded work.
	EmptyLaunches []jsonEmptyLaunch `json:"launches_without_gpu_work"`
	// Findings: what to fix first (docs/json.md#findings).
	Findings []jsonFinding        `json:"findings"`
	Below    []jsonBelowThreshold `json:"findings_below_threshold"`
	Settings []jsonSetting        `json:"settings"`
}

// jsonKernelsDoc is the document of traceq kernels --format json.
type jsonKernelsDoc struct {
	Inputs  []jsonInput  `json:"inputs"`
	Kernels []jsonKernel `json:"kernels"`
}

type jsonStepCat struct {
	Category      string  `json:"category"`
	KernelNS      int64   `json:"kernel_ns"`
	ShareOfKernel float64 `json:"share_of_kernel"`
	ShareOfSpan   float64 `json:"share_of_span"`
}

type jsonStep struct {
	Path        string        `json:"path"`
	Run         string        `json:"run"`
	Rank        *int          `json:"rank"`
	PID         int64         `json:"pid"`
	Device      int32         `json:"device"`
	Index       int           `json:"index"`
	Kind        string        `json:"kind"`
	Marker      string        `json:"marker"`
	MarkerStart int64         `json:"marker_start_ns"`
	MarkerEnd   int64         `json:"marker_end_ns"`
	StartNS     int64         `json:"start_ns"`
	OffsetNS    int64         `json:"offset_ns"`
	SpanNS      int64         `json:"span_ns"`
	BusyNS      int64         `json:"busy_ns"`
	IdleNS      int64         `json:"idle_ns"`
	KernelNS    int64         `json:"kernel_ns"`
	Categories  []jsonStepCat `json:"categories"`
	TopCategory string        `json:"top_category"`
	TopShare    float64       `json:"top_share"`
	Outlier     bool          `json:"outlier"`
	Idle        jsonIdle      `json:"idle"`
	// Tokens is the step's token count from its marker, null when the
	// marker does not say.
	Tokens *int64 `json:"tokens"`
	jsonRankID
}

func jsonSteps(rows []analyze.StepRow) []jsonStep {
	out := make([]jsonStep, len(rows))
	for i, r := range rows {
		j := jsonStep{Path: r.Rank.Path, Run: r.Rank.Run, Rank: r.Rank.Number, PID: r.Rank.PID, Device: r.Device, Index: r.Step.Index,
			Kind: r.Step.Kind.String(), Marker: r.Step.Marker, MarkerStart: int64(r.Step.Start), MarkerEnd: int64(r.Step.End),
			StartNS: int64(r.Start), OffsetNS: r.Offset, SpanNS: r.SpanNS, BusyNS: r.BusyNS, IdleNS: r.IdleNS,
			KernelNS: r.KernelNS, Outlier: r.Outlier, Idle: jsonIdleOf(r.Idle), jsonRankID: rankID(r.Rank)}
		for _, c := range r.Categories {
			j.Categories = append(j.Categories, jsonStepCat{Category: c.Category.String(), KernelNS: c.KernelNS,
				ShareOfKernel: c.ShareOfKernel, ShareOfSpan: c.ShareOfSpan})
		}
		if c, ok := r.TopCategory(); ok {
			j.TopCategory, j.TopShare = c.Category.String(), c.ShareOfKernel
		}
		if tok := r.Step.Tokens; tok >= 0 {
			j.Tokens = &tok
		}
		out[i] = j
	}
	return out
}

type jsonStepSummary struct {
	Path           string `json:"path"`
	Steps          int    `json:"steps"`
	Empty          int    `json:"steps_without_gpu_work"`
	UnattributedNS int64  `json:"unattributed_kernel_ns"`
	Unattributed   int64  `json:"unattributed_activities"`
}

type jsonStepKindStats struct {
	Path     string         `json:"path"`
	Rank     *int           `json:"rank"`
	PID      int64          `json:"pid"`
	Device   int32          `json:"device"`
	StepKind string         `json:"step_kind"`
	Stats    *jsonStepStats `json:"step_stats"`
}

// jsonStepsDoc is the document of traceq steps --format json.
type jsonStepsDoc struct {
	Inputs    []jsonInput         `json:"inputs"`
	Steps     []jsonStep          `json:"steps"`
	Summaries []jsonStepSummary   `json:"summaries"`
	Kinds     []jsonStepKindStats `json:"kinds"`
}

func stepsDoc(r *analyze.GroupTable) jsonStepsDoc {
	doc := jsonStepsDoc{Inputs: jsonInputs(r.Table.Inputs), Steps: []jsonStep{}, Summaries: []jsonStepSummary{}, Kinds: []jsonStepKindStats{}}
	if len(r.Steps) > 0 {
		doc.Steps = jsonSteps(r.Steps)
	}
	for _, in := range r.Table.Inputs {
		if s := in.Stepped; s != nil {
			doc.Summaries = append(doc.Summaries, jsonStepSummary{Path: in.Path, Steps: s.Steps, Empty: s.Empty,
				UnattributedNS: s.UnattributedNS, Unattributed: s.Unattributed})
		}
	}
	for _, g := range r.Groups {
		if g.StepStats != nil {
			doc.Kinds = append(doc.Kinds, jsonStepKindStats{Path: g.Rank.Path, Rank: g.Rank.Number, PID: g.Rank.PID, Device: g.Device,
				StepKind: g.Class.String(), Stats: jsonStats(g.StepStats)})
		}
	}
	return doc
}

type jsonCategoryDiff struct {
	Category        string   `json:"category"`
	BeforeNS        int64    `json:"before_kernel_ns"`
	AfterNS         int64    `json:"after_kernel_ns"`
	BeforePerStepNS int64    `json:"before_per_step_ns"`
	AfterPerStepNS  int64    `json:"after_per_step_ns"`
	DeltaNS         int64    `json:"delta_ns"`
	DeltaPct        *float64 `json:"delta_pct"`
	BeforeShare     float64  `json:"before_share"`
	AfterShare      float64  `json:"after_share"`
	ShareChange     float64  `json:"share_change"`
	Change          string   `json:"change"`
	BeforeStdDevNS  *int64   `json:"before_stddev_ns"`
	AfterStdDevNS   *int64   `json:"after_stddev_ns"`
	NoiseNS         *int64   `json:"noise_ns"`
}

// known is v, or null for -1 (unknown).
func known(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func jsonCatDiff(c analyze.CategoryDiff, total bool) jsonCategoryDiff {
	return jsonCategoryDiff{Category: rowCategory(total, c.Category), BeforeNS: c.BeforeNS, AfterNS: c.AfterNS,
		BeforePerStepNS: c.BeforePerStepNS, AfterPerStepNS: c.AfterPerStepNS, DeltaNS: c.DeltaNS, DeltaPct: c.DeltaPct,
		BeforeShare: c.BeforeShare, AfterShare: c.AfterShare, ShareChange: c.ShareChange,
		Change: c.Change, BeforeStdDevNS: known(c.BeforeStdDevNS), AfterStdDevNS: known(c.AfterStdDevNS), NoiseNS: known(c.NoiseNS)}
}

// jsonStepTimeDiff compares the step time's percentiles; the verdict is
// the p50's.
type jsonStepTimeDiff struct {
	BeforeP50      float64  `json:"before_p50_ns"`
	AfterP50       float64  `json:"after_p50_ns"`
	DeltaP50       float64  `json:"delta_p50_ns"`
	DeltaP50Pct    *float64 `json:"delta_p50_pct"`
	BeforeP90      float64  `json:"before_p90_ns"`
	AfterP90       float64  `json:"after_p90_ns"`
	DeltaP90       float64  `json:"delta_p90_ns"`
	DeltaP90Pct    *float64 `json:"delta_p90_pct"`
	Change         string   `json:"change"`
	BeforeStdDevNS *int64   `json:"before_stddev_ns"`
	AfterStdDevNS  *int64   `json:"after_stddev_ns"`
	NoiseNS        *int64   `json:"noise_ns"`
}

func jsonStepTime(st *analyze.StepTimeDiff) *jsonStepTimeDiff {
	if st == nil {
		return nil
	}
	return &jsonStepTimeDiff{BeforeP50: st.Before.P50, AfterP50: st.After.P50, DeltaP50: st.DeltaP50, DeltaP50Pct: st.DeltaP50Pct,
		BeforeP90: st.Before.P90, AfterP90: st.After.P90, DeltaP90: st.DeltaP90, DeltaP90Pct: st.DeltaP90Pct,
		Change: st.Change, BeforeStdDevNS: known(st.BeforeStdDevNS), AfterStdDevNS: known(st.AfterStdDevNS), NoiseNS: known(st.NoiseNS)}
}

// jsonTokenDiff compares the tokens per step and the time per token.
type jsonTokenDiff struct {
	BeforeTokensP50  float64  `json:"before_tokens_p50"`
	AfterTokensP50   float64  `json:"after_tokens_p50"`
	BeforeNSPerToken *int64   `json:"before_ns_per_token"` // null: undefined (no tokens)
	AfterNSPerToken  *int64   `json:"after_ns_per_token"`
	DeltaNSPerToken  *int64   `json:"delta_ns_per_token"`
	DeltaPct         *float64 `json:"delta_ns_per_token_pct"`
}

func jsonTokens(t *analyze.TokenDiff) *jsonTokenDiff {
	if t == nil {
		return nil
	}
	return &jsonTokenDiff{BeforeTokensP50: t.BeforeP50, AfterTokensP50: t.AfterP50, BeforeNSPerToken: t.BeforeNSPerToken,
		AfterNSPerToken: t.AfterNSPerToken, DeltaNSPerToken: t.DeltaNSPerToken, DeltaPct: t.DeltaPct}
}

type jsonKernelDiff struct {
	Name            string   `json:"name"`
	Category        string   `json:"category"`
	Match           string   `json:"match"`
	Change          string   `json:"change"`
	BeforeNS        int64    `json:"before_ns"`
	AfterNS         int64    `json:"after_ns"`
	BeforePerStepNS int64    `json:"before_per_step_ns"`
	AfterPerStepNS  int64    `json:"after_per_step_ns"`
	DeltaNS         int64    `json:"delta_ns"`
	DeltaPct        *float64 `json:"delta_pct"`
	BeforeInstances int64    `json:"before_instances"`
	AfterInstances  int64    `json:"after_instances"`
	BeforeNames     []string `json:"before_names,omitempty"`
	AfterNames      []string `json:"after_names,omitempty"`
	BeforeStdDevNS  *int64   `json:"before_stddev_ns"`
	AfterStdDevNS   *int64   `json:"after_stddev_ns"`
	NoiseNS         *int64   `json:"noise_ns"`
}

type jsonKindDiff struct {
	StepKind      string             `json:"step_kind"`
	BeforeWindows int                `json:"before_windows"`
	AfterWindows  int                `json:"after_windows"`
	BeforeDevices int                `json:"before_devices"`
	AfterDevices  int                `json:"after_devices"`
	BeforeSteps   int                `json:"before_steps"`
	AfterSteps    int                `json:"after_steps"`
	Total         jsonCategoryDiff   `json:"total"`
	Categories    []jsonCategoryDiff `json:"categories"`
	Kernels       []jsonKernelDiff   `json:"kernels"`
	Idle          jsonIdleDiff       `json:"idle"`
	StepTime      *jsonStepTimeDiff  `json:"step_time"`
	Tokens        *jsonTokenDiff     `json:"tokens"`
	// Wall compares the wall time per window (the span per device for a
	// whole trace); its category is "wall".
	Wall jsonCategoryDiff `json:"wall"`
}

// jsonIdleDiff compares the idle time per step, in total and by cause;
// the shares are of the side's idle time.
type jsonIdleDiff struct {
	Total       jsonCategoryDiff `json:"total"`
	LaunchBound jsonCategoryDiff `json:"launch_bound"`
	DeviceSide  jsonCategoryDiff `json:"device_side"`
	Unknown     jsonCategoryDiff `json:"unknown"`
}

func jsonIdleDiffOf(d analyze.IdleDiff) jsonIdleDiff {
	c := func(name string, x analyze.CategoryDiff) jsonCategoryDiff {
		j := jsonCatDiff(x, false)
		j.Category = name
		return j
	}
	return jsonIdleDiff{Total: c("idle", d.Total), LaunchBound: c("launch_bound", d.LaunchBound),
		DeviceSide: c("device_side", d.DeviceSide), Unknown: c("unknown", d.Unknown)}
}

// jsonDiffDoc is the document of traceq diff --format json.
type jsonDiffDoc struct {
	Before     []jsonInput    `json:"before"`
	After      []jsonInput    `json:"after"`
	Comparable bool           `json:"comparable"`
	Notes      []string       `json:"notes"`
	Kinds      []jsonKindDiff `json:"kinds"`
	BeforeRun  string         `json:"before_run"`
	AfterRun   string         `json:"after_run"`
	MinChange  jsonMinChange  `json:"min_change"`
	NoiseK     int            `json:"noise_k"`
	// Findings are the after run's (what to fix now), BeforeFindings the
	// before run's; FindingChanges what changed between them.
	Findings       []jsonFinding       `json:"findings"`
	BeforeFindings []jsonFinding       `json:"before_findings"`
	FindingChanges []jsonFindingChange `json:"finding_changes"`
}

// jsonFindingChange compares one step kind's findings before → after.
type jsonFindingChange struct {
	StepKind string `json:"step_kind"`
	// Straggler: none, gone, new, same, moved; with each side's rank
	// (null: none, or unknown) and saving.
	Straggler       string               `json:"straggler"`
	StragglerBefore *jsonStragglerChange `json:"straggler_before"`
	StragglerAfter  *jsonStragglerChange `json:"straggler_after"`
	Collectives     []jsonOpChange       `json:"collectives"`
	Savings         []jsonSavingChange   `json:"savings"`
}

type jsonStragglerChange struct {
	Rank     *int   `json:"rank"`
	Path     string `json:"path"`
	SavingNS int64  `json:"saving_ns_per_step"`
}

// jsonOpChange compares a collective's wait and transfer per step; null
// on a side without the op.
type jsonOpChange struct {
	Op               string `json:"op"`
	ProcessGroup     string `json:"process_group"`
	BeforeWaitNS     *int64 `json:"before_wait_ns_per_step"`
	AfterWaitNS      *int64 `json:"after_wait_ns_per_step"`
	BeforeTransferNS *int64 `json:"before_transfer_ns_per_step"`
	AfterTransferNS  *int64 `json:"after_transfer_ns_per_step"`
}

// jsonSavingChange compares one finding's saving; null on the side that
// does not list it.
type jsonSavingChange struct {
	Kind     string `json:"kind"`
	Subject  string `json:"subject"`
	BeforeNS *int64 `json:"before_saving_ns_per_step"`
	AfterNS  *int64 `json:"after_saving_ns_per_step"`
}

// jsonRunFindings is the findings of one run of rep.
func jsonRunFindings(rep *findings.Report, run string) []jsonFinding {
	out := []jsonFinding{}
	for _, f := range jsonFindings(rep) {
		if f.Run == run {
			out = append(out, f)
		}
	}
	return out
}

func jsonFindingChanges(cs []findings.KindChange) []jsonFindingChange {
	out := []jsonFindingChange{}
	strag := func(e *findings.StragglerEvidence) *jsonStragglerChange {
		if e == nil {
			return nil
		}
		return &jsonStragglerChange{Rank: e.Rank.Number, Path: e.Rank.Path, SavingNS: e.LeadNS}
	}
	for i := range cs {
		c := &cs[i]
		j := jsonFindingChange{StepKind: c.Class.String(), Straggler: stragglerChangeNames[c.Straggler()],
			StragglerBefore: strag(c.StragglerBefore), StragglerAfter: strag(c.StragglerAfter),
			Collectives: []jsonOpChange{}, Savings: []jsonSavingChange{}}
		for _, o := range c.Collectives {
			oc := jsonOpChange{Op: o.Op, ProcessGroup: o.Group}
			if o.Before != nil {
				oc.BeforeWaitNS, oc.BeforeTransferNS = i64p(o.Before.WaitNS), i64p(o.Before.TransferNS)
			}
			if o.After != nil {
				oc.AfterWaitNS, oc.AfterTransferNS = i64p(o.After.WaitNS), i64p(o.After.TransferNS)
			}
			j.Collectives = append(j.Collectives, oc)
		}
		for _, f := range c.Findings {
			sc := jsonSavingChange{Kind: f.Kind.String()}
			if f.Before != nil {
				sc.BeforeNS, sc.Subject = i64p(f.Before.SavingNS), Subject(f.Before)
			}
			if f.After != nil {
				sc.AfterNS, sc.Subject = i64p(f.After.SavingNS), Subject(f.After)
			}
			j.Savings = append(j.Savings, sc)
		}
		out = append(out, j)
	}
	return out
}

var stragglerChangeNames = map[findings.StragglerChange]string{findings.NoStraggler: "none", findings.StragglerGone: "gone",
	findings.StragglerNew: "new", findings.StragglerSame: "same", findings.StragglerMoved: "moved"}

// jsonMinChange is the threshold below which a change is unchanged.
type jsonMinChange struct {
	NS  int64   `json:"ns"`
	Pct float64 `json:"pct"`
}

func diffDoc(d *analyze.Diff) jsonDiffDoc {
	doc := jsonDiffDoc{Before: jsonInputs(d.Before.Inputs), After: jsonInputs(d.After.Inputs), Comparable: d.Comparable,
		Notes: DiffNotes(d), Kinds: []jsonKindDiff{}, BeforeRun: d.BeforeRun, AfterRun: d.AfterRun,
		MinChange: jsonMinChange{NS: d.MinChange.NS, Pct: d.MinChange.Pct}, NoiseK: d.NoiseK}
	for _, k := range d.Kinds {
		j := jsonKindDiff{StepKind: k.Class.String(), BeforeWindows: k.BeforeWindows, AfterWindows: k.AfterWindows,
			BeforeDevices: k.BeforeDevices, AfterDevices: k.AfterDevices, BeforeSteps: k.BeforeSteps, AfterSteps: k.AfterSteps,
			Total: jsonCatDiff(k.Total, true), Categories: []jsonCategoryDiff{}, Kernels: []jsonKernelDiff{},
			Idle: jsonIdleDiffOf(k.Idle), StepTime: jsonStepTime(k.StepTime), Tokens: jsonTokens(k.Tokens)}
		j.Wall = jsonCatDiff(k.Wall, false)
		j.Wall.Category = "wall"
		for _, c := range k.Categories {
			j.Categories = append(j.Categories, jsonCatDiff(c, false))
		}
		for _, kd := range k.Kernels {
			j.Kernels = append(j.Kernels, jsonKernelDiff{Name: kd.Name, Category: kd.Category.String(), Match: kd.Match,
				Change: kd.Change, BeforeNS: kd.BeforeNS, AfterNS: kd.AfterNS, BeforePerStepNS: kd.BeforePerStepNS,
				AfterPerStepNS: kd.AfterPerStepNS, DeltaNS: kd.DeltaNS, DeltaPct: kd.DeltaPct,
				BeforeInstances: kd.BeforeInstances, AfterInstances: kd.AfterInstances,
				BeforeNames: kd.BeforeNames, AfterNames: kd.AfterNames,
				BeforeStdDevNS: known(kd.BeforeStdDevNS), AfterStdDevNS: known(kd.AfterStdDevNS), NoiseNS: known(kd.NoiseNS)})
		}
		doc.Kinds = append(doc.Kinds, j)
	}
	return doc
}

// jsonSetting is one deployment setting and where it came from: a flag
// (source "--link"), the environment ("TRACEQ_LINK") or a traceq.toml
// (its path).
type jsonSetting struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

func jsonSettings(set *settings.Settings) []jsonSetting {
	out := []jsonSetting{}
	for _, s := range set.List() {
		out = append(out, jsonSetting{Name: string(s.Name), Value: s.Value, Source: s.From()})
	}
	return out
}

// jsonFinding is one finding (docs/json.md#findings): what a fix would
// save per step, with its evidence.
type jsonFinding struct {
	Run      string       `json:"run"`
	StepKind string       `json:"step_kind"`
	Kind     string       `json:"kind"`
	Subject  string       `json:"subject"`
	SavingNS int64        `json:"saving_ns_per_step"`
	Share    float64      `json:"share_of_step"`
	Evidence jsonEvidence `json:"evidence"`
	Remedy   string       `json:"remedy"`
	// Added to the contract.
	Estimate string `json:"estimate"`
	Text     string `json:"text"`
}

// jsonEvidence holds the evidence of a finding; the fields of other
// kinds are left out.
type jsonEvidence struct {
	// straggler
	Rank         *int         `json:"rank,omitempty"`
	Path         string       `json:"path,omitempty"`
	PID          int64        `json:"pid,omitempty"`
	LastArrivals int64        `json:"last_arrivals,omitempty"`
	Instances    int64        `json:"instances,omitempty"`
	LeadNS       *int64       `json:"lead_ns_per_step,omitempty"`
	OthersWaitNS *int64       `json:"others_wait_ns_per_step,omitempty"`
	Excess       []jsonExcess `json:"compute_excess,omitempty"`
	SlowGPU      *bool        `json:"slow_gpu,omitempty"`
	// transfer, latency_bound
	Op               string    `json:"op,omitempty"`
	ProcessGroup     string    `json:"process_group,omitempty"`
	GroupSize        int       `json:"group_size,omitempty"`
	InstancesPerStep *float64  `json:"instances_per_step,omitempty"`
	TransferNS       *int64    `json:"transfer_ns_per_step,omitempty"`
	WaitNS           *int64    `json:"wait_ns_per_step,omitempty"`
	SizedInstances   *int64    `json:"sized_instances,omitempty"`
	Fit              *jsonFit  `json:"fit,omitempty"`
	Link             *jsonLink `json:"link,omitempty"`
	AtLinkNS         *int64    `json:"at_link_ns_per_step,omitempty"`
	LinkSavingNS     *int64    `json:"link_saving_ns_per_step,omitempty"`
	LatencyNS        *int64    `json:"latency_ns_per_step,omitempty"`
	// launch_bound, between_steps, exposed_communication
	IdleNS          *int64   `json:"idle_ns_per_step,omitempty"`
	LaunchBoundNS   *int64   `json:"launch_bound_ns_per_step,omitempty"`
	LaunchCPUPerGPU *float64 `json:"launch_cpu_per_gpu,omitempty"`
	BetweenNS       *int64   `json:"between_steps_ns_per_step,omitempty"`
	PeriodNS        *float64 `json:"period_ns_p50,omitempty"`
	CommNS          *int64   `json:"communication_ns_per_step,omitempty"`
	ExposedNS       *int64   `json:"exposed_ns_per_step,omitempty"`
	// roofline
	Category   string   `json:"category,omitempty"`
	ModelledNS *int64   `json:"modelled_ns_per_step,omitempty"`
	RooflineNS *int64   `json:"roofline_ns_per_step,omitempty"`
	KernelNS   *int64   `json:"kernel_ns_per_step,omitempty"`
	Efficiency *float64 `json:"efficiency,omitempty"`
	// capture_gap
	Gap   string `json:"gap,omitempty"`
	Count *int64 `json:"count,omitempty"`
	Of    *int64 `json:"of,omitempty"`
}

type jsonExcess struct {
	Category string  `json:"category"`
	RankNS   int64   `json:"rank_ns_per_step"`
	MedianNS float64 `json:"median_ns_per_step"`
	Ratio    float64 `json:"ratio"`
}

// jsonFit is the latency–bandwidth fit of an op: beta_gbs is null when
// the time does not grow with the size (all latency).
type jsonFit struct {
	OK           bool     `json:"ok"`
	Sizes        int      `json:"sizes"`
	AlphaNS      float64  `json:"alpha_ns"`
	BetaGBps     *float64 `json:"beta_gbs"`
	LatencyShare float64  `json:"latency_share"`
}

// jsonBelowThreshold counts one run's and step kind's findings under
// --min-finding.
type jsonBelowThreshold struct {
	Run      string `json:"run"`
	StepKind string `json:"step_kind"`
	Count    int    `json:"count"`
	SavingNS int64  `json:"saving_ns_per_step"`
}

// jsonAdviseDoc is the document of traceq advise --format json.
type jsonAdviseDoc struct {
	Inputs     []jsonInput          `json:"inputs"`
	Settings   []jsonSetting        `json:"settings"`
	MinFinding float64              `json:"min_finding"`
	Findings   []jsonFinding        `json:"findings"`
	Below      []jsonBelowThreshold `json:"findings_below_threshold"`
}

func i64p(v int64) *int64     { return &v }
func f64p(v float64) *float64 { return &v }
func knownp(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func jsonFindings(rep *findings.Report) []jsonFinding {
	out := []jsonFinding{}
	if rep == nil {
		return out
	}
	for _, kf := range rep.Kinds {
		for i := range kf.Findings {
			f := &kf.Findings[i]
			j := jsonFinding{Run: f.Run, StepKind: f.Class.String(), Kind: f.Kind.String(), Subject: Subject(f),
				SavingNS: f.SavingNS, Share: f.Share, Remedy: f.Remedy, Estimate: f.Estimate.String(), Text: FindingText(f, true)}
			if e := f.Straggler; e != nil {
				slow := e.SlowGPU
				j.Evidence.Rank, j.Evidence.Path, j.Evidence.PID = e.Rank.Number, e.Rank.Path, e.Rank.PID
				j.Evidence.LastArrivals, j.Evidence.Instances = e.LastArrivals, e.Instances
				j.Evidence.LeadNS, j.Evidence.OthersWaitNS, j.Evidence.SlowGPU = i64p(e.LeadNS), i64p(e.WaitNS), &slow
				j.Evidence.Excess = []jsonExcess{}
				for _, x := range e.Excess {
					j.Evidence.Excess = append(j.Evidence.Excess, jsonExcess{Category: x.Category.String(), RankNS: x.RankNS, MedianNS: x.MedianNS, Ratio: x.Ratio})
				}
			}
			if e := f.Collective; e != nil {
				ev := &j.Evidence
				ev.Op, ev.ProcessGroup, ev.GroupSize = e.Op, e.Group, e.GroupSize
				ev.InstancesPerStep, ev.TransferNS, ev.WaitNS = f64p(e.InstancesPerStep), i64p(e.TransferNS), i64p(e.WaitNS)
				ev.Instances, ev.SizedInstances = e.Instances, i64p(e.SizedInstances)
				fit := &jsonFit{OK: e.Fit.OK, Sizes: e.Fit.Sizes, AlphaNS: e.Fit.AlphaNS, LatencyShare: e.Fit.LatencyShare()}
				if !math.IsInf(e.Fit.BetaGBps, 1) && e.Fit.OK {
					fit.BetaGBps = f64p(e.Fit.BetaGBps)
				}
				ev.Fit = fit
				if l := e.Link; l != nil {
					ev.Link = &jsonLink{Name: l.Name, GBps: l.GBps, About: l.About, Source: l.Source, AssumedFrom: l.Device}
				}
				ev.AtLinkNS, ev.LinkSavingNS, ev.LatencyNS = knownp(e.AtLinkNS), knownp(e.LinkSavingNS), knownp(e.LatencyNS)
			}
			if e := f.Idle; e != nil {
				ev := &j.Evidence
				switch f.Kind {
				case findings.LaunchBound:
					ev.IdleNS, ev.LaunchBoundNS, ev.LaunchCPUPerGPU = i64p(e.IdleNS), i64p(e.LaunchBoundNS), f64p(e.LaunchCPUPerGPU)
				case findings.BetweenSteps:
					ev.BetweenNS = i64p(e.BetweenNS)
					if e.PeriodNS > 0 {
						ev.PeriodNS = f64p(e.PeriodNS)
					}
				case findings.ExposedCommunication:
					ev.CommNS, ev.ExposedNS = i64p(e.CommBusyNS), i64p(e.CommExposedNS)
				}
			}
			if r := f.Roofline; r != nil {
				ev := &j.Evidence
				ev.Category, ev.KernelNS, ev.ModelledNS, ev.RooflineNS, ev.Efficiency = r.Category.String(), i64p(r.KernelNS),
					i64p(r.ModelledNS), i64p(r.RooflineNS), f64p(r.Efficiency)
			}
			if g := f.Gap; g != nil {
				j.Evidence.Gap, j.Evidence.Op, j.Evidence.Count, j.Evidence.Of = g.Gap.String(), g.Op, i64p(g.Count), i64p(g.Of)
			}
			out = append(out, j)
		}
	}
	return out
}

func jsonBelow(rep *findings.Report) []jsonBelowThreshold {
	out := []jsonBelowThreshold{}
	if rep == nil {
		return out
	}
	for _, kf := range rep.Kinds {
		if kf.Below > 0 {
			out = append(out, jsonBelowThreshold{Run: kf.Run, StepKind: kf.Class.String(), Count: kf.Below, SavingNS: kf.BelowNS})
		}
	}
	return out
}
