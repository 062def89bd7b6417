package datatype

import (
	"strconv"
	"strings"
)

// OpError is an operation the client got wrong: malformed JSON, an operation the type
// does not have, a bound exceeded. Msg is the plain-text body Riak answers with 400.
type OpError struct {
	Msg string
}

// Error returns the message.
func (e *OpError) Error() string { return strings.TrimSuffix(e.Msg, "\n") }

// opErrorf builds an OpError whose message ends in a newline, as Riak's do.
func opErrorf(msg string) *OpError { return &OpError{Msg: msg + "\n"} }

// PreconditionError is a remove of an element or field the value does not hold (or the
// given context has not seen): riak_dt's {precondition,{not_present,Term}}. The HTTP layer
// answers it with 412 and Body.
type PreconditionError struct {
	// Term is the missing element or field as Riak prints it (<<"x">> or
	// {<<"name">>,riak_dt_emcntr}).
	Term string
}

// Error returns the error as one line.
func (e *PreconditionError) Error() string {
	return "datatype: precondition failed: " + e.Term + " not present"
}

// Body is the plain-text body Riak's HTTP interface answers a precondition failure with.
func (e *PreconditionError) Body() string {
	return "Error:\n{precondition,{not_present," + e.Term + "}}\n"
}

// notPresentElem is the precondition error of a set element.
func notPresentElem(e string) error { return &PreconditionError{Term: erlBinary(e)} }

// notPresentField is the precondition error of a map field (kind byte + name).
func notPresentField(key string) error {
	return &PreconditionError{Term: "{" + erlBinary(key[1:]) + "," + riakModule(Kind(key[0])) + "}"}
}

// erlBinary prints b as Erlang's ~p prints a binary: <<"text">> when printable,
// <<1,2,3>> otherwise.
func erlBinary(b string) string {
	printable := true
	for i := 0; i < len(b); i++ {
		if b[i] < 0x20 || b[i] > 0x7e {
			printable = false
			break
		}
	}
	var sb strings.Builder
	sb.WriteString("<<")
	if printable {
		sb.WriteByte('"')
		for i := 0; i < len(b); i++ {
			if b[i] == '"' || b[i] == '\\' {
				sb.WriteByte('\\')
			}
			sb.WriteByte(b[i])
		}
		sb.WriteByte('"')
	} else {
		for i := 0; i < len(b); i++ {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(strconv.Itoa(int(b[i])))
		}
	}
	sb.WriteString(">>")
	return sb.String()
}
