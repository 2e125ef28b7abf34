package nsyssqlite

import (
	"slices"
	"strings"
	"testing"
)

// TestDriverTable: driver API calls. nsys writes them into
// CUPTI_ACTIVITY_KIND_RUNTIME (eventClass 1: cuLaunchKernel,
// cuLaunchKernelEx, ...), which every real export checked has; a
// CUPTI_ACTIVITY_KIND_DRIVER table with the same columns is read too
// when an export has one.
func TestDriverTable(t *testing.T) {
	ddlDriver := strings.Replace(ddlRuntime, "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_DRIVER", 1)
	script := ddlStrings + ddlKernel + ddlRuntime + ddlDriver + `
INSERT INTO StringIds VALUES (1, 'k'), (2, 'cudaLaunchKernel_v7000'), (3, 'cuLaunchKernelEx'), (4, 'cuGraphLaunch'), (5, 'cuCtxSynchronize');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 1, 7, 11, ` + gpid + `, 1, 1, NULL), (300, 400, 0, 1, 7, 12, ` + gpid + `, 1, 1, NULL),
  (500, 600, 0, 1, 7, 13, ` + gpid + `, 1, 1, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (90, 95, 0, ` + gtid + `, 11, 2, 0), (280, 290, 1, ` + gtid + `, 12, 3, 0);
INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (480, 490, 1, ` + gtid + `, 13, 3, 0),
  (10, 20, 1, ` + gtid + `, 30, 4, 0),  -- a graph launch without GPU work
  (20, 30, 1, ` + gtid + `, 31, 5, 0);  -- launches nothing
`
	tr := mustOpen(t, makeDB(t, "driver.sqlite", script), Options{})
	var got []string
	for _, l := range tr.Launches {
		got = append(got, tr.Names[l.Name]+"/"+itoa(l.Corr))
	}
	want := []string{"cudaLaunchKernel/11", "cuLaunchKernelEx/12", "cuLaunchKernelEx/13"}
	if !slices.Equal(got, want) {
		t.Errorf("launches %q, want %q", got, want)
	}
	for i := range tr.Activities {
		a := &tr.Activities[i]
		if l := tr.FindLaunch(a.Proc, a.Corr); l == nil || l.Start > a.Start {
			t.Errorf("kernel %d: launch %+v", a.Corr, l)
		}
	}
	if n := anomalyCount(tr, "cuda graph launches without recorded gpu work (capture with --cuda-graph-trace=node)"); n != 1 {
		t.Errorf("graph launches without GPU work: %d, want 1 (anomalies %+v)", n, tr.Anomalies)
	}

	t.Run("other columns", func(t *testing.T) {
		// nvprof's CUPTI_ACTIVITY_KIND_DRIVER (cbid, processId, threadId)
		// is not nsys's: skipped with a warning.
		script := ddlStrings + ddlKernel + `CREATE TABLE CUPTI_ACTIVITY_KIND_DRIVER (cbid INTEGER, start INTEGER, end INTEGER,
			processId INTEGER, threadId INTEGER, correlationId INTEGER, returnValue INTEGER);
INSERT INTO StringIds VALUES (1, 'k');
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 1, 7, 11, ` + gpid + `, 1, 1, NULL);
INSERT INTO CUPTI_ACTIVITY_KIND_DRIVER VALUES (1, 90, 95, 7, 9, 11, 0);`
		tr := mustOpen(t, makeDB(t, "nvprof.sqlite", script), Options{})
		if len(tr.Launches) != 0 || len(tr.Activities) != 1 {
			t.Errorf("%d launches, %d activities; want 0, 1", len(tr.Launches), len(tr.Activities))
		}
		if n := anomalyCount(tr, "CUPTI_ACTIVITY_KIND_DRIVER without nsys's columns skipped"); n != 1 {
			t.Errorf("anomalies %+v", tr.Anomalies)
		}
	})
}
