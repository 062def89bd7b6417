package main

// Golden wire transcripts of MapReduce (testdata/golden/mapred_*.txt), in the layout of
// golden_test.go. The chunked case keeps a single part (a reduce's output), so that its
// chunking does not depend on timing; normalise replaces its boundary.

import "testing"

func init() { goldenCaseSets = append(goldenCaseSets, mapredGoldenCases) }

func mapredGoldenCases() []goldenCase {
	numbers := func(bucket string) func(*testing.T, *child) {
		return func(t *testing.T, s *child) {
			for i := 1; i <= 3; i++ {
				s.mustPut(t, "/buckets/"+bucket+"/keys/k"+itoa(i), itoa(i), "Content-Type", "application/json")
			}
		}
	}
	const mapValue = `{"map":{"language":"erlang","module":"riak_kv_mapreduce","function":"map_object_value"}}`
	const toInt = `{"reduce":{"language":"erlang","module":"riak_kv_mapreduce","function":"reduce_string_to_integer"}}`
	const sum = `{"reduce":{"language":"erlang","module":"riak_kv_mapreduce","function":"reduce_sum"}}`
	return []goldenCase{
		{name: "mapred_map_reduce", setup: numbers("gmr"),
			req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" +
				`{"inputs":"gmr","query":[` + mapValue + `,` + toInt + `,` + sum + `]}`},
		{name: "mapred_keep_two", riak: true, setup: numbers("gmr-keep"),
			req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" +
				`{"inputs":[["gmr-keep","k1"],["gmr-keep","k3"]],"query":[{"map":{"language":"erlang","module":"riak_kv_mapreduce","function":"map_object_value","keep":true}},` + toInt + `,` + sum + `]}`},
		{name: "mapred_chunked", setup: numbers("gmr-chunked"),
			req: "POST /mapred?chunked=true HTTP/1.1\nContent-Type: application/json\n\n" +
				`{"inputs":"gmr-chunked","query":[` + mapValue + `,` + toInt + `,` + sum + `]}`},
		{name: "mapred_empty_query",
			req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" +
				`{"inputs":[["b","k"],["b","k2","kd"],["b","k3",null,"gt"]],"query":[]}`},
		{name: "mapred_400_query",
			req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" +
				`{"inputs":"gmr","query":[{"map":{"language":"cobol","source":"x"}}]}`},
		{name: "mapred_400_inputs",
			req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" + `{"inputs":[],"query":[]}`},
		{name: "mapred_400_setup",
			req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" +
				`{"inputs":"gmr","query":[{"map":{"language":"erlang","module":"riak_kv_mapreduce","function":"map_nothing"}}]}`},
		{name: "mapred_400_usage", req: "GET /mapred HTTP/1.1\n"},
		{name: "mapred_415", req: "POST /mapred HTTP/1.1\nContent-Type: text/plain\n\n" + `{"inputs":"gmr","query":[]}`},
		{name: "mapred_500_phase", setup: func(t *testing.T, s *child) {
			s.mustPut(t, "/buckets/gmr-err/keys/k", "not a number")
		}, req: "POST /mapred HTTP/1.1\nContent-Type: application/json\n\n" +
			`{"inputs":[["gmr-err","k"]],"query":[` + mapValue + `,` + sum + `]}`},
	}
}
