// Command pointsplugin is the process plugin of cmd/cairn's end-to-end tests for the
// extension points the example plugins do not cover: a chash_keyfun, a linkfun, a
// rewriting precommit, and precommits that misbehave (sleep past their deadline, exit
// in the middle of a call, fail).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

func main() {
	m := goplugin.NewMux()
	// first_byte places a key by its first byte alone: keys that share it share a
	// partition.
	m.KeyHash("first_byte", func(_ context.Context, _, _, key string) ([]byte, error) {
		if key == "" {
			return []byte{0}, nil
		}
		return []byte{key[0]}, nil
	})
	// json_links reads links from the value, {"links": [[bucket, key, tag], ...]}.
	m.Links("json_links", func(_ context.Context, obj *goplugin.Object, bucket, tag string) ([]goplugin.Link, error) {
		var out []goplugin.Link
		for _, c := range obj.Contents {
			if c.Deleted {
				continue
			}
			var v struct {
				Links [][3]string `json:"links"`
			}
			if err := json.Unmarshal(c.Value, &v); err != nil {
				return nil, nil // not JSON: no links
			}
			for _, l := range v.Links {
				if (bucket == "_" || bucket == l[0]) && (tag == "_" || tag == l[2]) {
					out = append(out, goplugin.Link{Bucket: l[0], Key: l[1], Tag: l[2]})
				}
			}
			break
		}
		return out, nil
	})
	// stamp rewrites every put: it adds the user metadata stamped=yes and the index
	// posting stamped_bin=yes.
	m.Precommit("stamp", func(_ context.Context, op goplugin.Op, obj *goplugin.Object) (goplugin.Verdict, error) {
		if op == goplugin.OpDelete || len(obj.Contents) == 0 {
			return goplugin.Verdict{}, nil
		}
		rep := *obj
		c := obj.Contents[0]
		c.UserMeta = append(append([]goplugin.Pair(nil), c.UserMeta...), goplugin.Pair{Key: "stamped", Value: "yes"})
		c.Indexes = append(append([]goplugin.Pair(nil), c.Indexes...), goplugin.Pair{Key: "stamped_bin", Value: "yes"})
		rep.Contents = []goplugin.Content{c}
		return goplugin.Verdict{Replace: &rep}, nil
	})
	// slow answers only when its deadline has passed, with the context's error (an
	// answer of accept at that moment could reach the server just before its own
	// deadline and count).
	m.Precommit("slow", func(ctx context.Context, _ goplugin.Op, _ *goplugin.Object) (goplugin.Verdict, error) {
		select {
		case <-ctx.Done():
			return goplugin.Verdict{}, ctx.Err()
		case <-time.After(time.Minute):
			return goplugin.Verdict{}, errors.New("no deadline within a minute")
		}
	})
	m.Precommit("exit", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		os.Exit(3)
		return goplugin.Verdict{}, nil
	})
	m.Precommit("fail", func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
		return goplugin.Verdict{}, errors.New("the fail hook always fails")
	})
	goplugin.Serve(m)
}
