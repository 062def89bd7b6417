package main

import "testing"

// Golden transcripts of secondary-index queries (item 7): exact keys, a range with
// return_terms, a full page with its continuation, a stream=true multipart body (chunk
// framing included) and a 400.

func init() { goldenCaseSets = append(goldenCaseSets, indexGoldenCases) }

func indexGoldenCases() []goldenCase {
	people := func(bucket string) func(*testing.T, *child) {
		return func(t *testing.T, s *child) {
			s.mustPut(t, "/buckets/"+bucket+"/keys/alice", "a", "X-Store-Index-Email_bin", "alice@example.com", "X-Riak-Index-Age_int", "30, -5")
			s.mustPut(t, "/buckets/"+bucket+"/keys/bob", "b", "X-Store-Index-Email_bin", "bob@example.com", "X-Store-Index-Age_int", "25")
			s.mustPut(t, "/buckets/"+bucket+"/keys/carol", "c", "X-Riak-Index-Age_int", "30")
		}
	}
	return []goldenCase{
		{name: "index_exact_keys", setup: people("g-idx-exact"), req: "GET /buckets/g-idx-exact/index/age_int/30 HTTP/1.1\n"},
		{name: "index_range_terms", setup: people("g-idx-range"), req: "GET /buckets/g-idx-range/index/age_int/-10/100?return_terms=true HTTP/1.1\n"},
		{name: "index_paged", setup: people("g-idx-paged"), req: "GET /buckets/g-idx-paged/index/age_int/-10/100?max_results=2 HTTP/1.1\n"},
		{name: "index_stream", riak: true, setup: people("g-idx-stream"), req: "GET /buckets/g-idx-stream/index/age_int/-10/100?stream=true&max_results=3&return_terms=true HTTP/1.1\n"},
		{name: "index_400", req: "GET /buckets/g-idx/index/age_int/old HTTP/1.1\n"},
	}
}
