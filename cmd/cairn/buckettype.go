package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/cairnkv/cairn/core"
)

// bucketType runs `cairn bucket-type create NAME [PROPS]` and `cairn bucket-type show
// NAME` on a data directory no server is using, as the reference's admin tool creates
// types out of band. PROPS is a JSON object of properties or {"props": {...}}.
func bucketType(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cairn bucket-type", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data-dir", envOr(getenv, "CAIRN_DATA_DIR", "./data"), "data directory (env CAIRN_DATA_DIR)")
	usage := func() {
		fmt.Fprint(stderr, "usage: cairn bucket-type create NAME [PROPS-JSON] | show NAME [--data-dir DIR]\n")
	}
	if len(args) < 2 {
		usage()
		return 2
	}
	sub, name := args[0], args[1]
	rest := args[2:]
	var propsArg string
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		propsArg, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return 2
	}
	// show only reads: the store must exist, and nothing in the directory changes.
	svc, _, closeStore, err := openOfflineDB(*dataDir, sub == "show", stderr)
	if err != nil {
		fmt.Fprintf(stderr, "cairn: %v\n", err)
		return 1
	}
	defer closeStore()
	switch sub {
	case "create":
		props := map[string]json.RawMessage{}
		if propsArg != "" {
			if err := json.Unmarshal([]byte(propsArg), &props); err != nil {
				fmt.Fprintf(stderr, "cairn: PROPS must be a JSON object: %v\n", err)
				return 2
			}
			if inner, ok := props["props"]; ok && len(props) == 1 {
				props = map[string]json.RawMessage{}
				if err := json.Unmarshal(inner, &props); err != nil {
					fmt.Fprintf(stderr, "cairn: props must be a JSON object: %v\n", err)
					return 2
				}
			}
		}
		if err := svc.CreateType(ctx, name, props); err != nil {
			fmt.Fprintf(stderr, "cairn: create bucket type %s: %v\n", name, describe(err))
			return 1
		}
		fmt.Fprintf(stdout, "bucket type %s created\n", name)
		return 0
	case "show":
		p, err := svc.TypeProps(ctx, name)
		if err != nil {
			fmt.Fprintf(stderr, "cairn: %v\n", describe(err))
			return 1
		}
		b, _ := json.MarshalIndent(map[string]any{"props": p}, "", "  ")
		fmt.Fprintln(stdout, string(b))
		return 0
	}
	usage()
	return 2
}

func envOr(getenv func(string) string, name, def string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return def
}

// describe renders a service error for the terminal, including property reasons.
func describe(err error) string {
	if e := core.AsError(err); e != nil {
		if len(e.Reasons) > 0 {
			b, _ := json.Marshal(e.Reasons)
			return string(b)
		}
		if e.Message != "" {
			return e.Message
		}
	}
	return err.Error()
}
