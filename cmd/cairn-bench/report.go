package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"text/tabwriter"
	"time"
)

// result is the JSON line printed last (and written to --json).
type result struct {
	Tool         string        `json:"tool"`
	Date         string        `json:"date"`
	Go           string        `json:"go"`
	GOOS         string        `json:"goos"`
	GOARCH       string        `json:"goarch"`
	GOMAXPROCS   int           `json:"gomaxprocs"`
	NProc        int           `json:"nproc"`
	Loadgen      string        `json:"loadgen"`
	LoadgenDesc  string        `json:"loadgen_desc"`
	DurationS    float64       `json:"duration_s"`
	WarmupS      float64       `json:"warmup_s"`
	AfterS       float64       `json:"after_s"`
	Conns        int           `json:"conns"`
	ValueBytes   int           `json:"value_bytes"`
	Keys         int           `json:"keys"`
	BurstPUTs    int           `json:"burst_puts"`
	BurstWriters int           `json:"burst_writers"`
	Quick        bool          `json:"quick"`
	Slices       int           `json:"slices"`
	Phases       []phaseResult `json:"phases"`
	Ratios       []ratioResult `json:"ratios"`
	Limits       []limitResult `json:"limits,omitempty"`
	Burst        *burstResult  `json:"burst,omitempty"`
	S3           *s3Result     `json:"s3,omitempty"`
	Notes        []string      `json:"notes,omitempty"`
}

func fmtMS(v float64) string {
	switch {
	case v <= 0:
		return "-"
	case v < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case v < 100:
		return fmt.Sprintf("%.2fms", v)
	default:
		return fmt.Sprintf("%.0fms", v)
	}
}

// report prints the table and the JSON line.
func (b *bench) report() error {
	fmt.Fprintln(b.out)
	tw := tabwriter.NewWriter(b.out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tserver\tconns\treq/s\tp50\tp99\terrors\tratio\tvs\ttarget\tresult\t")
	ratioOf := map[string]ratioResult{}
	for _, r := range b.ratios {
		if !r.Info {
			ratioOf[r.Num] = r
		}
	}
	for _, p := range b.phases {
		ratio, vs, target, res := "", "", "", ""
		if r, ok := ratioOf[p.Name]; ok {
			ratio = fmt.Sprintf("%.2f", r.Value)
			vs = r.Den
			target = fmt.Sprintf(">= %g", r.Target)
			res = "MISS"
			if r.Pass {
				res = "PASS"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t\n", p.Name, p.Server, p.Conns, p.RPS,
			fmtMS(p.P50ms), fmtMS(p.P99ms), p.Errors, ratio, vs, target, res)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if b.burst != nil {
		fmt.Fprintf(b.out, "\nburst: %d PUTs of new random keys (dw=0) from %d writer connections in %.1fs = %.0f PUT/s, alongside %d GET connections;\n"+
			"       \"after\" is the first %v after its last PUT was answered\n",
			b.burst.Requests, b.burst.Writers, b.burst.Seconds, b.burst.RPS, b.o.Conns, b.o.After)
		if b.burst.LevelDB != "" {
			fmt.Fprintf(b.out, "       LevelDB meanwhile: %s\n", b.burst.LevelDB)
		}
	}
	if err := b.reportS3(b.out); err != nil {
		return err
	}
	pass, targets := 0, 0
	for _, r := range b.ratios {
		if r.Info {
			fmt.Fprintf(b.out, "\n%s: %s / %s = %.2f (no target)\n", r.Name, r.Num, r.Den, r.Value)
			continue
		}
		targets++
		if r.Pass {
			pass++
		}
	}
	for _, l := range b.limits {
		targets++
		res := "MISS"
		if l.Pass {
			pass++
			res = "PASS"
		}
		fmt.Fprintf(b.out, "\n%s: %.1f %s (target <= %g %s) %s\n", l.Name, l.Value, l.Unit, l.Max, l.Unit, res)
	}
	fmt.Fprintf(b.out, "\ntargets met: %d of %d (loadgen %s; one run on a %d-CPU machine that may be shared: compare several runs before concluding)\n",
		pass, targets, b.loadgen, runtime.NumCPU())
	if b.o.Quick {
		fmt.Fprintln(b.out, "--quick: short phases and a small data set; the ratios are a smoke test, not a measurement")
	}
	for _, n := range b.notes {
		fmt.Fprintf(b.out, "note: %s\n", n)
	}

	res := result{
		Tool: "cairn-bench", Date: b.started.UTC().Format(time.RFC3339), Go: runtime.Version(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GOMAXPROCS: runtime.GOMAXPROCS(0), NProc: runtime.NumCPU(),
		Loadgen: b.loadgen, LoadgenDesc: b.loadgenDesc,
		DurationS: b.o.Duration.Seconds(), WarmupS: b.o.Warmup.Seconds(), AfterS: b.o.After.Seconds(),
		Conns: b.o.Conns, ValueBytes: b.o.ValueSize, Keys: b.o.Keys, BurstPUTs: b.o.Burst, BurstWriters: b.o.BurstWriters,
		Quick: b.o.Quick, Slices: b.slices(), Phases: b.phases, Ratios: b.ratios, Limits: b.limits, Burst: b.burst, S3: b.s3, Notes: b.notes,
	}
	if b.wrk != nil {
		res.DurationS = float64(ceilSeconds(b.o.Duration))
		res.WarmupS = float64(ceilSeconds(b.o.Warmup))
		res.AfterS = float64(ceilSeconds(b.o.After))
	}
	line, err := json.Marshal(res)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "\n%s\n", line)
	if b.o.JSONPath != "" {
		if err := os.WriteFile(b.o.JSONPath, append(line, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}
