// grafana-dashboard-check FILE...: checks Grafana dashboard JSON files against the dashboard
// schema of the Grafana Foundation SDK (the Go types Grafana generates from its own schema):
//
//   - strict decoding: no unknown field, no field of the wrong type, no required field missing,
//     in the dashboard, its panels, the panels' options for their plugin type, and the queries;
//   - every panel type and query datasource type is one the SDK knows (otherwise its options and
//     queries would pass unchecked);
//   - the schema's own constraints (Validate);
//   - a round trip: the dashboard encoded again from what was decoded is the same JSON, so nothing
//     in the file was dropped or read as something else.
//
// Prints a JSON report per file on stdout (its errors, and each panel's row, title, type, unit,
// datasource and queries, for the caller's own checks); exits 1 when a file has errors. Built into .tools/bin by
// scripts/install-tools.sh; run by test/deploy/grafana.test.ts.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

type panelReport struct {
	Title       string   `json:"title"`
	Type        string   `json:"type"`
	Row         string   `json:"row"`
	Unit        string   `json:"unit"`
	Description string   `json:"description"`
	Datasource  string   `json:"datasource"`
	Expressions []string `json:"expressions"`
}

type fileReport struct {
	File   string        `json:"file"`
	Errors []string      `json:"errors"`
	Panels []panelReport `json:"panels"`
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func checkPanel(p *dashboard.Panel, row string, where string, report *fileReport) {
	if _, known := cog.ConfigForPanelcfgVariant(p.Type); !known {
		report.Errors = append(report.Errors, fmt.Sprintf("%s: panel type %q is not one the schema knows", where, p.Type))
	}
	pr := panelReport{Title: str(p.Title), Type: p.Type, Row: row, Description: str(p.Description), Expressions: []string{}}
	if p.FieldConfig != nil {
		pr.Unit = str(p.FieldConfig.Defaults.Unit)
	}
	if p.Datasource != nil {
		pr.Datasource = str(p.Datasource.Uid)
	}
	for i, target := range p.Targets {
		query, ok := target.(*prometheus.Dataquery)
		if !ok {
			report.Errors = append(report.Errors, fmt.Sprintf("%s.targets[%d]: not a Prometheus query (%T)", where, i, target))
			continue
		}
		pr.Expressions = append(pr.Expressions, query.Expr)
	}
	report.Panels = append(report.Panels, pr)
}

// failed: the SDK's strict decoders return their error list as a typed nil when it is empty.
func failed(err error) bool {
	var list cog.BuildErrors
	if errors.As(err, &list) {
		return len(list) > 0
	}
	return err != nil
}

// decodePanels decodes the dashboard's panels again, for the round trip and the report. With SDK
// v0.0.22 the strict decoders report every error but keep nothing of a panel, a panel's options
// or a query: each takes the empty error list a strict decoder returns (a typed nil) for an error
// and drops the value it decoded. So panels are decoded strictly here too (their errors are the
// dashboard decoder's, reported already), and their options and queries by the SDK's lenient
// decoders for the same plugin and datasource types.
func decodePanels(raw []byte) []dashboard.PanelOrRowPanel {
	var top struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil
	}
	var panels []dashboard.PanelOrRowPanel
	for _, one := range top.Panels {
		var row struct {
			Type   string            `json:"type"`
			Panels []json.RawMessage `json:"panels"`
		}
		_ = json.Unmarshal(one, &row)
		if row.Type != "row" {
			panels = append(panels, dashboard.PanelOrRowPanel{Panel: decodePanel(one)})
			continue
		}
		r := &dashboard.RowPanel{}
		_ = r.UnmarshalJSONStrict(one)
		r.Panels = []dashboard.Panel{}
		for _, nested := range row.Panels {
			r.Panels = append(r.Panels, *decodePanel(nested))
		}
		panels = append(panels, dashboard.PanelOrRowPanel{RowPanel: r})
	}
	return panels
}

func decodePanel(raw []byte) *dashboard.Panel {
	p := &dashboard.Panel{}
	_ = p.UnmarshalJSONStrict(raw)
	var parts struct {
		Options json.RawMessage `json:"options"`
		Targets json.RawMessage `json:"targets"`
	}
	_ = json.Unmarshal(raw, &parts)
	if config, known := cog.ConfigForPanelcfgVariant(p.Type); known && config.OptionsUnmarshaler != nil && parts.Options != nil {
		if options, err := config.OptionsUnmarshaler(parts.Options); !failed(err) {
			p.Options = options
		}
	}
	if parts.Targets != nil {
		hint := ""
		if p.Datasource != nil && p.Datasource.Type != nil {
			hint = *p.Datasource.Type
		}
		if targets, err := cog.UnmarshalDataqueryArray(parts.Targets, hint); !failed(err) {
			p.Targets = targets
		}
	}
	return p
}

// differences lists the JSON paths where a and b differ.
func differences(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, path)
			return
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			differences(path+"."+k, av[k], bv[k], out)
		}
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			*out = append(*out, path)
			return
		}
		for i := range av {
			differences(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i], out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, path)
		}
	}
}

func check(file string) fileReport {
	report := fileReport{File: file, Errors: []string{}, Panels: []panelReport{}}
	raw, err := os.ReadFile(file)
	if err != nil {
		report.Errors = append(report.Errors, err.Error())
		return report
	}
	var d dashboard.Dashboard
	if err := d.UnmarshalJSONStrict(raw); failed(err) {
		report.Errors = append(report.Errors, "schema: "+err.Error())
		return report
	}
	d.Panels = decodePanels(raw)
	if err := d.Validate(); failed(err) {
		report.Errors = append(report.Errors, "constraints: "+err.Error())
	}
	// A panel belongs to the row above it (an open row), or is held in its row (a collapsed one).
	row := ""
	for i, item := range d.Panels {
		where := fmt.Sprintf("panels[%d]", i)
		switch {
		case item.Panel != nil:
			checkPanel(item.Panel, row, where, &report)
		case item.RowPanel != nil:
			row = str(item.RowPanel.Title)
			report.Panels = append(report.Panels, panelReport{Title: row, Type: "row", Expressions: []string{}})
			for j := range item.RowPanel.Panels {
				checkPanel(&item.RowPanel.Panels[j], row, fmt.Sprintf("%s.panels[%d]", where, j), &report)
			}
		}
	}
	again, err := json.Marshal(d)
	if err != nil {
		report.Errors = append(report.Errors, "encoding: "+err.Error())
		return report
	}
	var before, after any
	if err := json.Unmarshal(raw, &before); err != nil {
		report.Errors = append(report.Errors, err.Error())
		return report
	}
	if err := json.Unmarshal(again, &after); err != nil {
		report.Errors = append(report.Errors, err.Error())
		return report
	}
	var diffs []string
	differences("$", before, after, &diffs)
	for _, p := range diffs {
		report.Errors = append(report.Errors, "round trip: "+p+" is not the same once decoded and encoded again")
	}
	return report
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: grafana-dashboard-check FILE...")
		os.Exit(2)
	}
	plugins.RegisterDefaultPlugins()
	reports := []fileReport{}
	failed := false
	for _, file := range os.Args[1:] {
		r := check(file)
		failed = failed || len(r.Errors) > 0
		reports = append(reports, r)
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	if err := out.Encode(reports); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}
