/**
 * One growing buffer that bytes are written into piece by piece (it
 * doubles as needed): what the result part writer (lib/results/parts.ts)
 * and the results page's JSON writer (lib/results/json.ts `JsonBytes`)
 * write into, so neither makes a small buffer per piece and joins them at
 * the end.
 */
export class GrowingBytes {
  protected buffer: Buffer;
  protected length = 0;

  /** @param capacity - bytes to start with (it doubles as needed). */
  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  /** Bytes written so far. */
  get byteLength(): number {
    return this.length;
  }

  /** Makes room for `bytes` more bytes after those written (the buffer doubles, or grows to fit). */
  protected room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(grown, 0, 0, this.length);
    this.buffer = grown;
  }
}
