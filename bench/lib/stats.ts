/** Small statistics helpers for benchmark samples. */

/** Nearest-rank percentile (0 < p ≤ 100) of samples; sorts a copy. NaN when empty. */
export function percentile(samples: ArrayLike<number>, p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

/** Several percentiles of one sample set, sorting it once. */
export function percentiles(samples: ArrayLike<number>, ps: readonly number[]): number[] {
  if (samples.length === 0) return ps.map(() => NaN);
  const sorted = Float64Array.from(samples).sort();
  return ps.map((p) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A growable Float64Array for latency samples (no per-sample allocation). */
export class Samples {
  private data = new Float64Array(1 << 16);
  length = 0;

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

/** `12,345` */
export function fmtInt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a';
}

/** Milliseconds with two significant decimals below 10 ms. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return ms < 10 ? `${ms.toFixed(2)} ms` : `${ms.toFixed(1)} ms`;
}

export function fmtRatio(r: number): string {
  return Number.isFinite(r) ? r.toFixed(2) : 'n/a';
}
