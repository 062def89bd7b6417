// Precommit hooks for the examples of docs/hooks-javascript.md. Start a server with
// `cairn --js-source-dir docs/js` and name them in bucket properties:
// {"props":{"precommit":[{"name":"Notes.requireTitle"},{"name":"Notes.count"}]}}
var Notes = {
  // requireTitle refuses notes that are not JSON objects with a title.
  requireTitle: function (object) {
    var note;
    try {
      note = JSON.parse(object.values[0].data);
    } catch (e) {
      return { fail: "a note must be JSON" };
    }
    if (!note || !note.title) {
      return { fail: "a note needs a title" };
    }
    return object;
  },

  // count stores the note with its number of words, also as the index entry words_int.
  count: function (object) {
    var value = object.values[0];
    var note = JSON.parse(value.data);
    note.words = note.body ? note.body.split(/\s+/).length : 0;
    value.data = JSON.stringify(note);
    value.metadata.index = value.metadata.index || {};
    value.metadata.index.words_int = note.words;
    return object;
  },
};
