/**
 * Splits a byte stream of concatenated JPEG images (ffmpeg's `image2pipe` with the mjpeg encoder)
 * into whole images. It walks the marker segments instead of searching for FFD9, because FFD9 may
 * legally occur inside segment payloads; inside entropy-coded data every 0xFF is followed by a
 * stuffed 0x00 or a restart marker, so the first other marker there ends the scan.
 */
export class JpegStreamSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private pos = 0;
  private inScan = false;

  /** Feeds bytes; returns the images completed by them, in order. */
  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const images: Buffer[] = [];
    for (;;) {
      const image = this.advance();
      if (image === 'more') return images;
      images.push(image);
    }
  }

  /** True when bytes of an unfinished image are pending (a truncated stream at its end). */
  get pending(): boolean {
    return this.buf.length > 0;
  }

  private advance(): Buffer | 'more' {
    const { buf } = this;
    if (this.pos === 0) {
      if (buf.length < 2) return 'more';
      if (buf[0] !== 0xff || buf[1] !== 0xd8) throw new Error('the stream is not a sequence of JPEG images');
      this.pos = 2;
    }
    for (;;) {
      if (this.inScan) {
        const i = buf.indexOf(0xff, this.pos);
        if (i < 0 || i + 1 >= buf.length) {
          this.pos = Math.max(this.pos, buf.length - 1);
          return 'more';
        }
        const next = buf[i + 1]!;
        if (next === 0x00 || (next >= 0xd0 && next <= 0xd7) || next === 0xff) {
          this.pos = i + 1;
          continue;
        }
        this.inScan = false;
        this.pos = i;
      }
      if (this.pos + 2 > buf.length) return 'more';
      if (buf[this.pos] !== 0xff)
        throw new Error(`corrupt JPEG stream: expected a marker at byte ${this.pos}`);
      const marker = buf[this.pos + 1]!;
      if (marker === 0xff) {
        this.pos += 1; // fill byte before a marker
        continue;
      }
      if (marker === 0xd9) {
        const image = buf.subarray(0, this.pos + 2);
        this.buf = buf.subarray(this.pos + 2);
        this.pos = 0;
        return image;
      }
      if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
        this.pos += 2;
        continue;
      }
      if (this.pos + 4 > buf.length) return 'more';
      const end = this.pos + 2 + buf.readUInt16BE(this.pos + 2);
      if (end > buf.length) return 'more';
      this.pos = end;
      if (marker === 0xda) this.inScan = true;
    }
  }
}
