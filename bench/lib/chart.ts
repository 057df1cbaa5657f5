/** SVG charts through vega-lite (compiled to a vega spec) and vega's headless renderer. */
import fs from 'node:fs';
import * as vega from 'vega';
import * as vegaLite from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

export async function writeSvg(file: string, spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  fs.writeFileSync(file, svg);
  return file;
}

/** Line chart of admitted scopes/s against backlog size (log scale), one line per backend. */
export function scanThroughputSpec(points: Array<{ backend: string; scopes: number; perSecond: number }>, title: string): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 480,
    height: 280,
    background: 'white',
    data: { values: points },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'scopes', type: 'quantitative', scale: { type: 'log' }, title: 'backlog (dirty scopes)', axis: { format: '~s' } },
      y: { field: 'perSecond', type: 'quantitative', title: 'admitted scopes per second', axis: { format: '~s' }, scale: { zero: true } },
      color: { field: 'backend', type: 'nominal', title: 'backend' },
      tooltip: [{ field: 'backend' }, { field: 'scopes' }, { field: 'perSecond', format: ',.0f' }],
    },
  };
}
