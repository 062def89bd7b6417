// Package mapreduce runs the reference system's MapReduce jobs over the key-value
// service: job decoding with the reference's error messages (ParseJob), the inputs (a
// bucket, a typed bucket, key lists with key data, key-filtered buckets, secondary-index
// queries), the map, reduce and link phases, and the shapes of their results. It knows
// nothing of HTTP: core/kvapi serves POST /mapred with it.
//
// # Running a job
//
// Start loads every phase's function (through core/hooks: the native built-ins named
// "erlang", JavaScript from source, by name or from a stored object, WebAssembly
// functions) and takes one of the service's job slots; Execution.Run then runs the
// phases as a pipeline and hands the kept outputs to a callback as they come, which the
// HTTP layer streams (chunked) or gathers with a Collector.
//
// Inputs are listed from one storage snapshot (kv.View) while the first phase consumes
// them. Objects are read when a map or link phase needs them, through kv.Service.Get:
// the object cache serves hot objects, and a map sees an object's current value
// (an object deleted since the listing is a not-found input, or a tombstone while its
// tombstone is visible).
//
// # Memory and concurrency
//
// Phases are connected by bounded channels, so a bucket of a million keys streams
// through a job in constant memory. A map phase calls its function on up to
// Config.Workers inputs at once and passes their outputs on in input order, so results
// are deterministic.
//
// A map phase whose function is a hooks.MapStreamer (a process plugin, for which a
// call per input would be a round trip per input) and is not JavaScript streams its
// inputs instead: it opens one stream when its first input comes (a phase without
// inputs opens none); a sender goroutine reads each input's object and sends it, at
// most 512 inputs ahead of the outputs received; the phase receives each input's
// outputs in order and passes them on as above, so its results and its errors (the
// failing input's *PhaseError) are those of one call per input. The stream is closed
// when the phase ends, however it ends.
//
// Function calls across all jobs are limited by Config.MaxCalls and running jobs by
// Config.MaxJobs (a job waits for a slot within its own timeout). A streamed phase
// counts as one call while it opens its stream and while it waits for outputs; it gives
// its call slot back while it waits for its input or for the next phase, since a slot
// held there could deadlock a job whose other phases need one (a reduce after it, a
// map before it). A reduce phase holds its previous output and one batch (20 values
// by default); results answered in one body and a reduce phase's values are bounded
// by Config.MaxResultBytes.
//
// # Cancellation
//
// A job ends at its timeout (ErrTimeout), at the first failing phase (*PhaseError), or
// when the caller's context ends (the client went away): every phase stops, every
// goroutine of the job returns before Run does, and the snapshot is released.
package mapreduce
