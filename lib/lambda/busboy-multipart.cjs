/**
 * Stand-in for `@fastify/busboy` inside the Lambda bundles (an esbuild `alias` in
 * infra/constructs/service-function.ts): busboy's own entry point (its index.js, 3.2.x) without the
 * urlencoded parser. In a function only `@middy/http-multipart-body-parser` builds a busboy, and
 * only for a `multipart/form-data` body (its content-type check; lib/http/pipeline.ts hands
 * urlencoded bodies to `@middy/http-urlencode-body-parser`, which does not use busboy), yet busboy's
 * index requires its urlencoded parser and that parser's decoder: about 4 KB of minified code in
 * every bundle that takes forms, never run. Here a content type busboy's multipart parser does not
 * detect is refused with busboy's own error for a type it does not know ('Unsupported Content-Type.').
 *
 * busboy's modules are required by path: the alias maps every `@fastify/busboy` import to this file,
 * subpaths included. Only the bundles use it; the sources (local stack, tests) keep busboy's entry.
 * test/infra/bundle.test.ts checks a bundle holds busboy's multipart parser and not this one's
 * dropped part, and sends a multipart body to a bundled function.
 */
'use strict';

const { Writable } = require('node:stream');
const { inherits } = require('node:util');
const MultipartParser = require('../../node_modules/@fastify/busboy/lib/types/multipart.js');
const parseParams = require('../../node_modules/@fastify/busboy/lib/utils/parseParams.js');

/**
 * busboy's constructor (callable without `new`, as middy calls it): a Writable that parses a
 * multipart body written into it and emits `field`, `file`, `finish` and `error` as busboy does.
 * @param {{ headers: Record<string, string>, [option: string]: unknown }} opts - busboy's options.
 * @throws {TypeError} without options or a Content-Type header; {Error} when the type is not multipart/form-data.
 */
function Busboy(opts) {
  if (!(this instanceof Busboy)) return new Busboy(opts);
  if (typeof opts !== 'object') throw new TypeError('Busboy expected an options-Object.');
  if (typeof opts.headers !== 'object') throw new TypeError('Busboy expected an options-Object with headers-attribute.');
  if (typeof opts.headers['content-type'] !== 'string') throw new TypeError('Missing Content-Type-header.');
  const { headers, ...streamOptions } = opts;
  this.opts = { autoDestroy: false, ...streamOptions };
  Writable.call(this, this.opts);
  this._done = false;
  this._parser = this.getParserByHeaders(headers);
  this._finished = false;
}
inherits(Busboy, Writable);

Busboy.prototype.emit = function (ev) {
  if (ev === 'finish') {
    if (!this._done) {
      this._parser?.end();
      return;
    } else if (this._finished) {
      return;
    }
    this._finished = true;
  }
  Writable.prototype.emit.apply(this, arguments);
};

Busboy.prototype.getParserByHeaders = function (headers) {
  const parsed = parseParams(headers['content-type']);
  if (!MultipartParser.detect.test(parsed[0])) throw new Error('Unsupported Content-Type.');
  return new MultipartParser(this, {
    defCharset: this.opts.defCharset,
    fileHwm: this.opts.fileHwm,
    headers,
    highWaterMark: this.opts.highWaterMark,
    isPartAFile: this.opts.isPartAFile,
    limits: this.opts.limits,
    parsedConType: parsed,
    preservePath: this.opts.preservePath,
  });
};

Busboy.prototype._write = function (chunk, encoding, cb) {
  this._parser.write(chunk, cb);
};

module.exports = Busboy;
module.exports.default = Busboy;
module.exports.Busboy = Busboy;
