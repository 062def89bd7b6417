// riak-js 1.1.0 (HTTP API) against Cairn with KV access control on (--kv-auth). The
// credentials travel in riak-js's own `headers` option (riak-js keeps it "so that users
// can override headers"): an Authorization header with HTTP Basic credentials. riak-js
// has no auth option of its own and no HTTPS transport.
//
// Environment (set by TestRealClientsAuth):
//   RIAK_HOST, RIAK_PORT          the server
//   RIAK_USER, RIAK_PASSWORD      a user's key id and secret, granted get, put, delete
//                                 and list_keys on bucket RIAK_BUCKET of the default
//                                 type, and mapreduce on any
//   RIAK_BUCKET                   that bucket
//   RIAK_PROTOCOL                 "http" (default) or "https": riak-js only speaks
//                                 http, so for https its http.request calls are handed
//                                 to https.request (the CA comes from NODE_EXTRA_CA_CERTS)
//
// No riak-js code is changed: only Node's http.request is adapted, as in riak-js.js,
// for Node's current option handling and, with RIAK_PROTOCOL=https, for TLS.
'use strict';

const http = require('http');
const https = require('https');
const { step, ok, eq, noErr, call, run, target, fail, show } = require('../lib/check');

run('riak-js-auth', async () => {
  const { host, port } = target();
  const user = process.env.RIAK_USER;
  const password = process.env.RIAK_PASSWORD;
  const B = process.env.RIAK_BUCKET;
  const protocol = process.env.RIAK_PROTOCOL || 'http';
  if (!user || !password || !B) fail('RIAK_USER, RIAK_PASSWORD and RIAK_BUCKET must be set');
  if (protocol !== 'http' && protocol !== 'https') fail('RIAK_PROTOCOL must be http or https, not ' + protocol);

  // riak-js hands its Meta object to http.request as the options, its path and headers
  // being getters on Meta's prototype, which current Node does not copy (see
  // riak-js.js). Pass them as own properties; over https, to https.request.
  const request = http.request;
  http.request = function (options, cb) {
    if (options && typeof options === 'object' && !(options instanceof URL) && Object.getPrototypeOf(options) !== Object.prototype) {
      const own = {};
      for (const k in options) own[k] = options[k]; // own and inherited enumerable properties
      if (protocol === 'https') {
        // Only the request's own fields: riak-js's "key" (the object's) would be taken
        // for a TLS private key.
        return https.request({ host: own.host, port: own.port, method: own.method, path: own.path, headers: own.headers }, cb);
      }
      return request.call(this, own, cb);
    }
    return request.apply(this, arguments);
  };

  const basic = (id, secret) => 'Basic ' + Buffer.from(id + ':' + secret).toString('base64');
  const db = require('riak-js')({ host, port, headers: { Authorization: basic(user, password) } });
  const anonymous = require('riak-js')({ host, port });
  const wrong = require('riak-js')({ host, port, headers: { Authorization: basic(user, password + 'x') } });

  step('credentials');
  {
    const [err, , meta] = await call((cb) => anonymous.get(B, 'k', cb));
    ok(err && meta && meta.statusCode === 401, 'without credentials: 401', show(meta && meta.statusCode));
    const [err2, , meta2] = await call((cb) => wrong.get(B, 'k', cb));
    ok(err2 && meta2 && meta2.statusCode === 401, 'with a wrong secret: 401', show(meta2 && meta2.statusCode));
    const [err3, , meta3] = await call((cb) => db.get(B, 'k', cb));
    ok(err3 && err3.notFound && meta3.statusCode === 404, 'with the credentials: a missing key is a 404', show(meta3 && meta3.statusCode));
  }

  step('objects');
  {
    const [err] = await call((cb) => db.save(B, 'k', { n: 1 }, cb));
    noErr(err, 'save');
    const [err2, v] = await call((cb) => db.get(B, 'k', cb));
    noErr(err2, 'get');
    eq(v, { n: 1 }, 'get returns what save stored');
    const [err3, , meta3] = await call((cb) => db.save(B + '-not-granted', 'k', { n: 1 }, cb));
    ok(err3 && err3.statusCode === 403, 'save to a bucket without grants: 403', show(meta3 && meta3.statusCode));
    ok(/Permission denied: User '.*' does not have 'riak_kv.put'/.test(String(err3 && err3.message)),
      'the refusal is Riak\'s text', show(err3 && err3.message));
  }

  step('listing and mapreduce');
  {
    const [err, keys] = await call((cb) => db.keys(B, { keys: 'true' }, cb));
    noErr(err, 'keys');
    eq(keys, ['k'], 'keys lists the bucket');
    const [err2, , meta2] = await call((cb) => db.buckets(cb));
    ok(err2 && meta2 && meta2.statusCode === 403, 'listing buckets without list_buckets: 403', show(meta2 && meta2.statusCode));
    const [err3, res] = await call((cb) => db.mapreduce.add(B).map('Riak.mapValuesJson').run(cb));
    noErr(err3, 'mapreduce over the bucket');
    eq(res, [{ n: 1 }], 'mapreduce maps the bucket');
  }

  step('delete');
  {
    const [err] = await call((cb) => db.remove(B, 'k', cb));
    noErr(err, 'remove');
    const [err2, , meta2] = await call((cb) => db.get(B, 'k', cb));
    ok(err2 && err2.notFound && meta2.statusCode === 404, 'the removed key is gone', show(meta2 && meta2.statusCode));
  }
});
