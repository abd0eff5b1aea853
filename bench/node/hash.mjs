// The Node.js reference of BenchmarkHash: JSON.parse, npm canonicalize
// (RFC 8785) and crypto SHA-256 over each card that bench/writecards wrote,
// printed as Go benchmark lines so that bench/report and benchstat read
// them with the Go results.
//
// usage: node hash.mjs CARDS_DIR COUNT SECONDS
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import canonicalize from 'canonicalize';

const [dir, count = '1', seconds = '1'] = process.argv.slice(2);
const hash = (text) => createHash('sha256').update(canonicalize(JSON.parse(text)), 'utf8').digest('hex');

for (const name of ['small', 'typical', 'large']) {
  const text = readFileSync(join(dir, `${name}.json`), 'utf8');
  const bytes = Buffer.byteLength(text, 'utf8');
  const want = readFileSync(join(dir, `${name}.sha256`), 'utf8').trim();
  const got = hash(text);
  if (got !== want) {
    console.error(`node: ${name}: hash ${got}, Go says ${want}`);
    process.exit(1);
  }
  for (let w = 0; w < 20; w++) hash(text); // warm up the JIT
  for (let r = 0; r < Number(count); r++) {
    let n = 0;
    const cpu0 = process.cpuUsage();
    const start = process.hrtime.bigint();
    const end = start + BigInt(Math.round(Number(seconds) * 1e9));
    let now = start;
    while (now < end || n === 0) {
      hash(text);
      n++;
      now = process.hrtime.bigint();
    }
    const cpu = process.cpuUsage(cpu0);
    const nsPerOp = Number(now - start) / n;
    const cpuPerOp = (cpu.user + cpu.system) * 1e3 / n;
    const mbps = bytes / nsPerOp * 1e3;
    console.log(`BenchmarkHash/${name}/node\t${n}\t${nsPerOp.toFixed(0)} ns/op\t${mbps.toFixed(2)} MB/s\t${cpuPerOp.toFixed(0)} cpu-ns/op`);
  }
}
