package mapreduce

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/index"
)

// DefaultTimeout is a job's time limit when the job sets none (the reference's 60 s).
const DefaultTimeout = 60 * time.Second

// Limits of a job, checked when it is parsed (400, in the reference's message form), so
// that no number a client sends sizes anything unbounded.
const (
	// MaxTimeout is the longest timeout a job may set (a timeout is 1 ms to this).
	MaxTimeout = time.Hour
	// MaxPhases is the most phases a query may have.
	MaxPhases = 64
	// MaxInputs is the most entries a key-list input may have.
	MaxInputs = 100_000
)

// Job is a parsed MapReduce job.
type Job struct {
	// Inputs are the job's inputs.
	Inputs Inputs
	// Query is the phases, in order; an empty query returns the inputs themselves.
	Query []Phase
	// Timeout bounds the whole job (DefaultTimeout when the job sets none).
	Timeout time.Duration
	// CanRead, if set, is asked before the job reads an object (an input of a map or
	// link phase, wherever a link led): its error fails the job. The KV interface sets
	// it under access control.
	CanRead func(ctx context.Context, typ, bucket string) error
}

// InputKind says what the inputs of a job are.
type InputKind int

// The kinds of inputs.
const (
	// InputBucket is every key of a bucket.
	InputBucket InputKind = iota
	// InputKeys is an explicit list of keys.
	InputKeys
	// InputKeyFilter is the keys of a bucket that pass a key filter.
	InputKeyFilter
	// InputIndex is the keys a secondary-index query finds in a bucket.
	InputIndex
)

// Inputs are the inputs of a job.
type Inputs struct {
	Kind InputKind
	// Type and Bucket name the bucket of InputBucket, InputKeyFilter and InputIndex.
	Type, Bucket string
	// Typed records that the bucket was given with its type (["type","bucket"]); the
	// inputs it yields are then shown with their type.
	Typed bool
	// Keys lists the inputs of InputKeys.
	Keys []Input
	// Filter selects the keys of InputKeyFilter.
	Filter KeyFilter
	// Index is the query of InputIndex.
	Index index.Query
}

// Input is one input of a phase that reads objects: an object's place and the key data
// that goes with it.
type Input struct {
	Type, Bucket, Key string
	// Typed records that the input names its bucket type (a typed key-list entry, a key
	// of a typed bucket); results and not-found values then carry the type.
	Typed bool
	// KeyData is the key data (JSON), nil when the input has none.
	KeyData json.RawMessage
}

// PhaseKind is map, reduce or link.
type PhaseKind int

// The kinds of phase.
const (
	Map PhaseKind = iota
	Reduce
	Link
)

var phaseKindNames = [...]string{"map", "reduce", "link"}

// String returns "map", "reduce" or "link".
func (k PhaseKind) String() string {
	if k < 0 || int(k) >= len(phaseKindNames) {
		return "unknown"
	}
	return phaseKindNames[k]
}

// The languages of map and reduce functions.
const (
	LangErlang     = "erlang"
	LangJavaScript = "javascript"
	LangWASM       = "wasm"
)

// Phase is one phase of a job.
type Phase struct {
	Kind PhaseKind
	// Keep sends the phase's outputs to the client (default: only the last phase's).
	Keep bool
	// Arg is the phase's static argument (JSON), nil when the phase has none.
	Arg json.RawMessage

	// Language is the language of a map or reduce function.
	Language string
	// Module and Function name an Erlang-named built-in or a WebAssembly function.
	Module, Function string
	// Source is JavaScript source (or Erlang source, which is refused), when HasSource.
	Source    string
	HasSource bool
	// Name is a named JavaScript function ("Riak.mapValuesJson").
	Name string
	// SourceBucket and SourceKey name an object whose value is the function's source.
	SourceBucket, SourceKey string

	// LinkBucket and LinkTag select the links a link phase follows ("_": any).
	LinkBucket, LinkTag string
}

// Kept returns the indexes of the kept phases, in order.
func (j *Job) Kept() []int {
	var out []int
	for i, p := range j.Query {
		if p.Keep {
			out = append(out, i)
		}
	}
	return out
}

// The reference's messages for an invalid job (text/plain, 400).
const (
	msgNotObject    = "The POST body was not a JSON object.\n"
	msgMissingField = "The post body was missing the \"inputs\" or \"query\" field.\n"
	msgInputsError  = "An error occurred parsing the \"inputs\" field.\n"
	msgQueryError   = "An error occurred parsing the \"query\" field.\n"
	msgNoInputs     = "No inputs were given.\n"
	// Usage is the reference's answer to a GET of the MapReduce resource.
	Usage = "This resource accepts POSTs with bodies containing JSON of the form:\n{\n \"inputs\":[...list of inputs...],\n \"query\":[...list of map/reduce phases...]\n}\n"
)

// inputForms is the list of valid input forms that follows an unrecognised one.
const inputForms = "Valid formats are:\n" +
	"\n" +
	"Key List:\n" +
	"  - Map/Reduce over the provided set of keys.\n" +
	"  - {\"inputs\":[[\"mybucket\",\"mykey1\"], [\"mybucket\",\"mykey2\"], ...]}\n" +
	"\n" +
	"Key List with Key Data:\n" +
	"  - Map/Reduce over the provided set of keys.\n" +
	"  - {\"inputs\":[[\"mybucket\",\"mykey1\", \"mykeydata1\"], [\"mybucket\",\"mykey2\", \"mykeydata1\"], ...]}\n" +
	"\n" +
	"Key List with Key Data and Bucket Type:\n" +
	"  - {\"inputs\":[[\"mybucket\",\"mykey1\", \"mykeydata1\", \"mytype\"], ...]}\n" +
	"\n" +
	"Index Query - Exact Match:\n" +
	"  - {\"inputs\":{\"bucket\":\"mybucket\", \"index\":\"myindex_bin\", \"key\":\"mykey\"}}\n" +
	"\n" +
	"Index Query - Range Search:\n" +
	"  - Use secondary indexes to generate a starting set of keys.\n" +
	"  - {\"inputs\":{\"bucket\":\"mybucket\", \"index\":\"myindex_bin\", \"start\":\"key1\", \"end\":\"key2\"}}\n" +
	"\n" +
	"Bucket:\n" +
	"  - Map/Reduce over all keys in the provided bucket.\n" +
	"  - WARNING: THIS CAN BE A SLOW OPERATION!\n" +
	"  - {\"inputs\":\"mybucket\"}\n" +
	"  - {\"inputs\":[\"mytype\",\"mybucket\"]}\n" +
	"\n" +
	"Bucket With Key Filter:\n" +
	"  - Filter keys in a bucket, then Map/Reduce.\n" +
	"  - WARNING: THIS CAN BE A SLOW OPERATION!\n" +
	"  - {\"inputs\":{\"bucket\":\"mybucket\", \"key_filters\":[[\"matches\", \"foo.*\"]]}}\n\n"

func inputsError(detail string) error { return &ParseError{Message: msgInputsError + detail} }

func queryError(detail string) error { return &ParseError{Message: msgQueryError + detail} }

func invalidInput(raw json.RawMessage) error {
	return inputsError("Unrecognized format of \"inputs\" field:   " + compact(raw) + "\n\n" + inputForms)
}

// ParseJob decodes and checks a job (the body of POST /mapred). Every error is a
// *ParseError whose Message is the reference system's 400 body: the JSON is invalid or
// not an object, "inputs" or "query" is missing, or one of them is malformed (the
// message names the offending value).
//
// Where the reference prints an error's detail as an Erlang term, the detail is given
// here as the text it holds.
func ParseJob(body []byte) (*Job, error) {
	var probe json.RawMessage
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, &ParseError{Message: "The POST body was not valid JSON.\nThe error from the parser was:\n" + parserError(err) + "\n"}
	}
	if jsonKind(probe) == '{' && countItems(probe) > maxMembers {
		return nil, &ParseError{Message: "The POST body has more than " + strconv.Itoa(maxMembers) + " fields.\n"}
	}
	ms, ok := members(probe, maxMembers)
	if !ok {
		return nil, &ParseError{Message: msgNotObject}
	}
	job := &Job{Timeout: DefaultTimeout}
	inputs, hasInputs := get(ms, "inputs")
	query, hasQuery := get(ms, "query")
	if !hasInputs || !hasQuery {
		return nil, &ParseError{Message: msgMissingField}
	}
	in, err := parseInputs(inputs)
	if err != nil {
		return nil, err
	}
	job.Inputs = in
	if job.Query, err = parseQuery(query); err != nil {
		return nil, err
	}
	if raw, ok := get(ms, "timeout"); ok {
		if job.Timeout, err = parseTimeout(raw); err != nil {
			return nil, err
		}
	}
	return job, nil
}

// parseTimeout reads the "timeout" field: a number of milliseconds from 1 to
// MaxTimeout (a fraction of one is kept), or null for the default. The reference takes
// anything else for the default; a job that sets a timeout it cannot have is refused
// here instead.
func parseTimeout(raw json.RawMessage) (time.Duration, error) {
	if jsonKind(raw) == 'n' {
		return DefaultTimeout, nil
	}
	maxMS := float64(MaxTimeout / time.Millisecond)
	if isNumber(raw) {
		f, err := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
		if err == nil && f >= 1 && f <= maxMS {
			return time.Duration(math.Ceil(f * float64(time.Millisecond))), nil
		}
	}
	return 0, &ParseError{Message: "An error occurred parsing the \"timeout\" field.\n" +
		"The timeout must be a number of milliseconds from 1 to " + strconv.FormatFloat(maxMS, 'f', -1, 64) +
		", not " + compact(raw) + ".\n"}
}

// parserError is the JSON decoder's complaint without Go's type names.
func parserError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error() + " (at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	}
	return err.Error()
}

// parseInputs reads the "inputs" field, trying the forms in the reference's order.
func parseInputs(raw json.RawMessage) (Inputs, error) {
	switch jsonKind(raw) {
	case '"':
		b, _ := str(raw)
		return Inputs{Kind: InputBucket, Type: core.DefaultType, Bucket: b}, nil
	case '[':
		if n := countItems(raw); n > MaxInputs {
			return Inputs{}, inputsError("The key list has " + strconv.Itoa(n) + " inputs; at most " +
				strconv.Itoa(MaxInputs) + " are allowed.\n")
		}
		es, _ := elements(raw, MaxInputs)
		if len(es) == 2 {
			t, ok1 := str(es[0])
			b, ok2 := str(es[1])
			if ok1 && ok2 {
				return Inputs{Kind: InputBucket, Type: t, Bucket: b, Typed: true}, nil
			}
		}
		if len(es) == 0 {
			return Inputs{}, inputsError(msgNoInputs)
		}
		keys := make([]Input, 0, len(es))
		for _, e := range es {
			in, ok := parseKeyInput(e)
			if !ok {
				return Inputs{}, invalidInput(e)
			}
			keys = append(keys, in)
		}
		return Inputs{Kind: InputKeys, Keys: keys}, nil
	case '{':
		ms, ok := members(raw, maxMembers)
		if !ok {
			return Inputs{}, inputsError("The \"inputs\" object has more than " + strconv.Itoa(maxMembers) + " fields.\n")
		}
		return parseObjectInput(raw, ms)
	}
	return Inputs{}, invalidInput(raw)
}

// parseKeyInput reads one key-list entry: [B, K], [B, K, KeyData] or
// [B, K, KeyData, Type].
func parseKeyInput(raw json.RawMessage) (Input, bool) {
	es, ok := elements(raw, 4)
	if !ok || len(es) < 2 {
		return Input{}, false
	}
	b, ok1 := str(es[0])
	k, ok2 := str(es[1])
	if !ok1 || !ok2 {
		return Input{}, false
	}
	in := Input{Type: core.DefaultType, Bucket: b, Key: k}
	if len(es) >= 3 {
		in.KeyData = es[2]
	}
	if len(es) == 4 {
		t, ok := str(es[3])
		if !ok {
			return Input{}, false
		}
		in.Type, in.Typed = t, true
	}
	return in, true
}

// parseObjectInput reads the object forms: an Erlang input generator and a search
// query (both refused), a secondary-index query, a key-filtered bucket.
func parseObjectInput(raw json.RawMessage, ms []member) (Inputs, error) {
	has := func(k string) bool { _, ok := get(ms, k); return ok }
	switch {
	case has("module") && has("function") && has("arg"):
		return Inputs{}, inputsError("Erlang input functions ({\"module\", \"function\", \"arg\"}) are not supported:   " + compact(raw) + "\n")
	case (has("bucket") || has("index")) && has("query"):
		return Inputs{}, inputsError("Search inputs are not supported: this server has no search index:   " + compact(raw) + "\n")
	case has("bucket") && has("index") && (has("key") || (has("start") && has("end"))):
		return parseIndexInput(raw, ms)
	case has("bucket") && has("key_filters"):
		typ, bucket, typed, ok := bucketOf(ms)
		if !ok {
			return Inputs{}, invalidInput(raw)
		}
		filters, _ := get(ms, "key_filters")
		if jsonKind(filters) != '[' || countItems(filters) == 0 {
			return Inputs{}, invalidInput(raw)
		}
		f, err := ParseKeyFilters(filters)
		if err != nil {
			return Inputs{}, inputsError(err.Error() + "\n")
		}
		return Inputs{Kind: InputKeyFilter, Type: typ, Bucket: bucket, Typed: typed, Filter: f}, nil
	}
	return Inputs{}, invalidInput(raw)
}

// bucketOf reads the "bucket" member: "bucket" or ["type", "bucket"].
func bucketOf(ms []member) (typ, bucket string, typed, ok bool) {
	raw, _ := get(ms, "bucket")
	if b, ok := str(raw); ok {
		return core.DefaultType, b, false, true
	}
	es, isList := elements(raw, 2)
	if !isList || len(es) != 2 {
		return "", "", false, false
	}
	t, ok1 := str(es[0])
	b, ok2 := str(es[1])
	return t, b, true, ok1 && ok2
}

// parseIndexInput reads {"bucket", "index", "key"} or {"bucket", "index", "start",
// "end"}. Terms may be strings or numbers; "$bucket" ignores its term.
func parseIndexInput(raw json.RawMessage, ms []member) (Inputs, error) {
	typ, bucket, typed, ok := bucketOf(ms)
	field := ""
	if ok {
		rawField, _ := get(ms, "index")
		field, ok = str(rawField)
	}
	if !ok {
		return Inputs{}, invalidInput(raw)
	}
	var terms []string
	names := []string{"key"}
	if _, exact := get(ms, "key"); !exact {
		names = []string{"start", "end"}
	}
	for _, n := range names {
		v, _ := get(ms, n)
		t, ok := indexTerm(v)
		if !ok {
			if strings.EqualFold(field, index.FieldBucket) {
				continue
			}
			return Inputs{}, inputsError("Invalid index query term for field '" + field + "': " + compact(v) + "\n")
		}
		terms = append(terms, t)
	}
	q, err := index.NewQuery(field, terms)
	if err != nil {
		return Inputs{}, inputsError(indexReason(err) + "\n")
	}
	return Inputs{Kind: InputIndex, Type: typ, Bucket: bucket, Typed: typed, Index: q}, nil
}

// indexTerm reads an index term: a string, or a number as its JSON text.
func indexTerm(raw json.RawMessage) (string, bool) {
	if s, ok := str(raw); ok {
		return s, true
	}
	if isNumber(raw) {
		return strings.TrimSpace(string(raw)), true
	}
	return "", false
}

// indexReason describes a query the index refuses.
func indexReason(err error) string {
	var qe *index.QueryError
	if !errors.As(err, &qe) {
		return err.Error()
	}
	switch qe.Kind {
	case index.UnknownFieldType:
		return "Unknown field type for field: '" + qe.Field + "'."
	case index.FieldParsingFailed:
		return "Could not parse field '" + qe.Field + "', value '" + qe.Value + "'."
	}
	return strings.TrimPrefix(qe.Error(), "index: ")
}

// parseQuery reads the "query" field.
func parseQuery(raw json.RawMessage) ([]Phase, error) {
	if n := countItems(raw); jsonKind(raw) == '[' && n > MaxPhases {
		return nil, queryError("The query has " + strconv.Itoa(n) + " phases; at most " + strconv.Itoa(MaxPhases) + " are allowed.\n")
	}
	es, ok := elements(raw, MaxPhases)
	if !ok {
		return nil, queryError("The value of the \"query\" field was not a list:\n   " + compact(raw) + "\n")
	}
	phases := make([]Phase, 0, len(es))
	for i, e := range es {
		p, err := parsePhase(e, i == len(es)-1)
		if err != nil {
			return nil, err
		}
		phases = append(phases, p)
	}
	return phases, nil
}

// parsePhase reads one phase: {"map": SPEC}, {"reduce": SPEC} or {"link": SPEC}.
func parsePhase(raw json.RawMessage, last bool) (Phase, error) {
	outer, ok := members(raw, 1)
	var spec []member
	kind := Map
	if ok && len(outer) == 1 {
		switch outer[0].key {
		case "map":
		case "reduce":
			kind = Reduce
		case "link":
			kind = Link
		default:
			ok = false
		}
		if ok {
			spec, ok = members(outer[0].val, maxMembers)
		}
	} else {
		ok = false
	}
	if !ok {
		return Phase{}, queryError("Unrecognized format of query phase:\n   " + compact(raw) +
			"\n\nValid formats are:\n   {\"map\":{...spec...}}\n   {\"reduce\":{...spec...}}\n   {\"link\":{...spec...}}\n")
	}
	p := Phase{Kind: kind, Keep: last}
	if k, has := get(spec, "keep"); has {
		switch jsonKind(k) {
		case 't':
			p.Keep = true
		case 'f':
			p.Keep = false
		default:
			return Phase{}, queryError("The \"keep\" field was not a boolean value in:\n   " + compact(raw) + "\n")
		}
	}
	specJSON := compact(outer[0].val)
	if kind == Link {
		p.LinkBucket, p.LinkTag = "_", "_"
		okB, okT := true, true
		if v, has := get(spec, "bucket"); has {
			p.LinkBucket, okB = str(v)
		}
		if v, has := get(spec, "tag"); has {
			p.LinkTag, okT = str(v)
		}
		if !okB || !okT {
			return Phase{}, queryError("Invalid link step specification:\n   " + specJSON +
				"\n\n \"bucket\" and \"tag\" fields must have string values.\n")
		}
		return p, nil
	}
	if a, has := get(spec, "arg"); has {
		p.Arg = a
	}
	lang, has := get(spec, "language")
	if !has {
		return Phase{}, queryError("No \"language\" was specified for the phase:\n   " + specJSON + "\n")
	}
	l, _ := str(lang)
	p.Language = l
	var err error
	switch l {
	case LangJavaScript:
		err = parseJavaScript(&p, spec, specJSON)
	case LangErlang:
		err = parseErlang(&p, spec, specJSON)
	case LangWASM:
		err = parseWASM(&p, spec, specJSON)
	default:
		err = queryError("Unknown language " + compact(lang) + " in phase:\n   " + specJSON + "\n")
	}
	if err != nil {
		return Phase{}, err
	}
	return p, nil
}

// parseJavaScript reads a JavaScript function: "source", else "name", else "bucket"
// and "key".
func parseJavaScript(p *Phase, spec []member, specJSON string) error {
	noFunction := queryError("No function specified in Javascript phase:\n   " + specJSON +
		"\n\nFunctions may be specified by:\n" +
		"   - a \"source\" field, with source for a Javascript function\n" +
		"   - a \"name\" field, naming a predefined Javascript function\n" +
		"   - \"bucket\" and \"key\" fields, specifying an object containing Javascript function source\n")
	if v, has := get(spec, "source"); has {
		s, ok := str(v)
		if !ok {
			return noFunction
		}
		p.Source, p.HasSource = s, true
		return nil
	}
	if v, has := get(spec, "name"); has {
		s, ok := str(v)
		if !ok {
			return noFunction
		}
		p.Name = s
		return nil
	}
	v, has := get(spec, "bucket")
	if !has {
		return noFunction
	}
	kv, hasKey := get(spec, "key")
	if !hasKey {
		return queryError("Javascript phase was missing a \"key\" field to match the \"bucket\" field, pointing to the function to evaluate in:   " + specJSON + "\n")
	}
	b, ok1 := str(v)
	k, ok2 := str(kv)
	if !ok1 || !ok2 {
		return noFunction
	}
	p.SourceBucket, p.SourceKey = b, k
	return nil
}

// parseErlang reads an Erlang function: "module" and "function" (the built-ins), or
// "source" or "bucket" and "key" (Erlang source, accepted here and refused when the job
// starts, as the reference refuses it unless allow_strfun is set).
func parseErlang(p *Phase, spec []member, specJSON string) error {
	src, hasSrc := get(spec, "source")
	b, hasB := get(spec, "bucket")
	k, hasK := get(spec, "key")
	m, hasM := get(spec, "module")
	f, hasF := get(spec, "function")
	switch {
	case hasSrc && !hasB && !hasK && !hasM && !hasF && (jsonKind(src) == '"' || jsonKind(src) == '['):
		p.Source, p.HasSource = compact(src), true
		if s, ok := str(src); ok {
			p.Source = s
		}
		return nil
	case !hasSrc && hasB && hasK && !hasM && !hasF:
		bs, ok1 := str(b)
		ks, ok2 := str(k)
		if ok1 && ok2 {
			p.SourceBucket, p.SourceKey = bs, ks
			return nil
		}
	case !hasSrc && !hasB && !hasK && hasM && hasF:
		ms, ok1 := str(m)
		fs, ok2 := str(f)
		if ok1 && ok2 {
			p.Module, p.Function = ms, fs
			return nil
		}
	}
	return queryError("No function specified in Erlang phase:\n   " + specJSON +
		"\n\nFunctions may be specified by:\n" +
		"   - a \"source\" field, with source for an Erlang function\n" +
		"   - \"module\" and \"function\" fields, specifying an Erlang module and function\n" +
		"   - \"bucket\" and \"key\" fields, specifying an object containing Erlang function source\n")
}

// parseWASM reads a WebAssembly function: "module" (a registered module) and
// "function" (one of its exports).
func parseWASM(p *Phase, spec []member, specJSON string) error {
	m, hasM := get(spec, "module")
	f, hasF := get(spec, "function")
	if hasM && hasF {
		ms, ok1 := str(m)
		fs, ok2 := str(f)
		if ok1 && ok2 && ms != "" && fs != "" {
			p.Module, p.Function = ms, fs
			return nil
		}
	}
	return queryError("No function specified in WebAssembly phase:\n   " + specJSON +
		"\n\nFunctions are specified by \"module\" and \"function\" fields, naming a registered module and one of its functions\n")
}
