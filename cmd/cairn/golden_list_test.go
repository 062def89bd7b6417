package main

import "testing"

func init() { goldenCaseSets = append(goldenCaseSets, listGoldenCases) }

// listGoldenCases are the key-listing transcripts. (Bucket listings are not transcribed:
// the golden servers are shared by parallel cases, so their bucket sets vary; the stream
// framing is the same code and TestListBuckets checks it.)
func listGoldenCases() []goldenCase {
	keys := func(path string) func(*testing.T, *child) {
		return func(t *testing.T, s *child) {
			for _, k := range []string{"k1", "k%202", "k3"} {
				s.mustPut(t, path+k, "v")
			}
		}
	}
	return []goldenCase{
		{name: "list_keys", setup: keys("/buckets/g-list/keys/"), req: "GET /buckets/g-list/keys?keys=true HTTP/1.1\n"},
		{name: "list_keys_stream", setup: keys("/buckets/g-list-s/keys/"), req: "GET /buckets/g-list-s/keys?keys=stream HTTP/1.1\n"},
		{name: "list_keys_old_props_riak", riak: true, setup: keys("/riak/g-list-p/"), req: "GET /riak/g-list-p?keys=true HTTP/1.1\n"},
		{name: "list_keys_old_stream_riak", riak: true, setup: keys("/riak/g-list-os/"), req: "GET /riak/g-list-os?keys=stream HTTP/1.1\n"},
		{name: "list_keys_old_stream_noprops", setup: keys("/store/g-list-np/"), req: "GET /store/g-list-np?keys=stream&props=false HTTP/1.1\n"},
		{name: "list_keys_typed", setup: keys("/types/gt/buckets/g-list-t/keys/"), req: "GET /types/gt/buckets/g-list-t/keys?keys=true HTTP/1.1\n"},
		{name: "list_keys_none", req: "GET /buckets/g-list-none/keys HTTP/1.1\n"},
		{name: "list_buckets_none", req: "GET /buckets HTTP/1.1\n"},
		{name: "err_400_list_timeout", req: "GET /buckets/g-list/keys?keys=true&timeout=x HTTP/1.1\n"},
		{name: "err_404_list_unknown_type", req: "GET /types/nosuch/buckets/g/keys?keys=true HTTP/1.1\n"},
	}
}
