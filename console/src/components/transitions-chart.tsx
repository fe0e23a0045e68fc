import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';

export interface Summary {
  interval: string;
  from: string;
  until: string;
  types: string[];
  totals: Record<string, number>;
  buckets: Array<{ start: string; counts: Record<string, number> }>;
}

const colours: Record<string, string> = { 'device.offline': '#c62828', 'device.online': '#2e7d32' };

/** uPlot's options for one series per event type, drawn as bars per hour. */
function options(summary: Summary, width: number): uPlot.Options {
  const bars = uPlot.paths.bars!({ size: [0.8, 12] });
  return {
    width,
    height: 220,
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [{}, { label: 'events per hour', size: 60 }],
    series: [
      {},
      ...summary.types.map((type) => ({
        label: type,
        stroke: colours[type] ?? '#555',
        fill: `${colours[type] ?? '#555555'}99`,
        paths: bars,
        points: { show: false },
      })),
    ],
    legend: { live: false },
  };
}

function data(summary: Summary): uPlot.AlignedData {
  const xs = summary.buckets.map((b) => Date.parse(b.start) / 1000);
  return [xs, ...summary.types.map((type) => summary.buckets.map((b) => b.counts[type] ?? 0))];
}

/** Offline and online transitions per hour over the retained week (`GET /v1/events/summary`). */
export function TransitionsChart({ summary }: { summary: Summary }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current!;
    const plot = new uPlot(options(summary, el.clientWidth || 600), data(summary), el);
    const resize = new ResizeObserver(() => plot.setSize({ width: el.clientWidth || 600, height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [summary]);
  const described = summary.types.map((type) => `${summary.totals[type] ?? 0} ${type}`).join(', ');
  return (
    <figure>
      <div ref={box} role="img" aria-label={`Transitions per hour since ${summary.from}: ${described}`} class="chart" />
      <figcaption>In the retained week: {described} (UTC hours, from the connector's event log).</figcaption>
    </figure>
  );
}
