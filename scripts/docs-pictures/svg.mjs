// SVG written by code: text escaped for XML, and horizontal bar charts from given figures.

/** `text` safe inside an XML text node or a double-quoted attribute. */
export function escapeXml(text) {
  return String(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A number rounded for an SVG coordinate (no float noise in the file). */
export const px = (n) => Math.round(n * 10) / 10;

// The charts' palette: readable on the white card in light and dark pages.
export const COLORS = {
  card: '#ffffff',
  border: '#d0d7de',
  text: '#1f2328',
  muted: '#57606a',
  grid: '#eaeef2',
  ours: '#0969da',
  ours2: '#54aeff',
  other: '#8c959f',
  other2: '#c9d1d9',
};

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";

/** A rough width of `text` in px at `size` (no font metrics here: an average glyph of 0.56 em). */
export const textWidth = (text, size) => String(text).length * size * 0.56;

/**
 * A horizontal bar chart: one group of bars per row, one bar per series, each bar's length
 * `value / max × plot width` (the scale starts at 0), its value written after it.
 *
 * @param {object} chart
 * @param {string} chart.title
 * @param {string} [chart.subtitle]
 * @param {string} chart.unit — the axis's unit, e.g. "ms per step"
 * @param {{ name: string }[]} chart.series — what each bar of a group is (a legend when more than one)
 * @param {{ label: string, values: (number | undefined)[], highlight?: boolean }[]} chart.rows
 * @param {(value: number) => string} [chart.format] — a value's label
 * @param {(value: number) => string} [chart.tick] — an axis tick's label
 * @param {(row: object) => string} [chart.valueNote] — more words after a row's value labels
 * @param {string | string[]} chart.source — where the figures come from, and their date (a line each)
 * @param {number} [chart.width]
 */
export function barChart({
  title,
  subtitle,
  unit,
  series,
  rows,
  format = (v) => String(v),
  valueNote = () => '',
  tick = (v) => String(Math.round(v * 100) / 100),
  source,
  width = 960,
}) {
  const label = (row, value) => format(value) + valueNote(row);
  const pad = 24;
  const barHeight = 18;
  const barGap = 4;
  const groupGap = 14;
  const labelSize = 14;
  const labelWidth = Math.min(360, Math.max(...rows.map((r) => textWidth(r.label, labelSize))) + 16);
  const valueRoom = Math.max(
    60,
    ...rows.flatMap((r) => r.values.map((v) => (v === undefined ? 0 : textWidth(label(r, v), 12) + 12))),
  );
  const plotX = pad + labelWidth;
  const plotWidth = width - plotX - pad - valueRoom;
  const max = Math.max(...rows.flatMap((r) => r.values.filter((v) => v !== undefined)), 0);
  const scale = max > 0 ? plotWidth / max : 0;

  const lines = [];
  let y = pad;
  lines.push(
    `<text x="${pad}" y="${y + 18}" font-size="20" font-weight="600" fill="${COLORS.text}">${escapeXml(title)}</text>`,
  );
  y += 28;
  if (subtitle) {
    lines.push(`<text x="${pad}" y="${y + 14}" font-size="13" fill="${COLORS.muted}">${escapeXml(subtitle)}</text>`);
    y += 22;
  }
  const colorOf = (row, i) =>
    row.highlight ? (i === 0 ? COLORS.ours : COLORS.ours2) : i === 0 ? COLORS.other : COLORS.other2;
  if (series.length > 1) {
    let x = pad;
    y += 6;
    series.forEach((s, i) => {
      lines.push(
        `<rect x="${x}" y="${y}" width="12" height="12" rx="2" fill="${i === 0 ? COLORS.ours : COLORS.ours2}"/>`,
        `<rect x="${x + 14}" y="${y}" width="12" height="12" rx="2" fill="${i === 0 ? COLORS.other : COLORS.other2}"/>`,
        `<text x="${x + 32}" y="${y + 11}" font-size="13" fill="${COLORS.text}">${escapeXml(s.name)}</text>`,
      );
      x += 32 + textWidth(s.name, 13) + 28;
    });
    y += 22;
  }
  y += 8;
  const plotTop = y;
  const groupHeight = series.length * barHeight + (series.length - 1) * barGap;
  const bars = [];
  for (const row of rows) {
    const labelY = y + groupHeight / 2 + 5;
    bars.push(
      `<text x="${plotX - 12}" y="${px(labelY)}" font-size="${labelSize}" text-anchor="end" fill="${COLORS.text}"${row.highlight ? ' font-weight="600"' : ''}>${escapeXml(row.label)}</text>`,
    );
    row.values.forEach((value, i) => {
      const barY = y + i * (barHeight + barGap);
      if (value === undefined) {
        bars.push(
          `<text x="${plotX + 4}" y="${px(barY + 13)}" font-size="12" fill="${COLORS.muted}">not measured</text>`,
        );
        return;
      }
      const length = px(Math.max(value * scale, value > 0 ? 1 : 0));
      bars.push(
        `<rect class="bar" data-row="${escapeXml(row.label)}" data-series="${i}" data-value="${value}" x="${plotX}" y="${px(barY)}" width="${length}" height="${barHeight}" rx="2" fill="${colorOf(row, i)}"/>`,
        `<text x="${px(plotX + length + 6)}" y="${px(barY + 13)}" font-size="12" fill="${COLORS.text}">${escapeXml(label(row, value))}</text>`,
      );
    });
    y += groupHeight + groupGap;
  }
  const plotBottom = y - groupGap + 6;
  // Grid lines at round steps of the scale, under the bars.
  const grid = [];
  if (max > 0) {
    const rough = max / 4;
    const magnitude = 10 ** Math.floor(Math.log10(rough));
    const stepSize = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? rough;
    for (let value = 0; value <= max * 1.0001; value += stepSize) {
      const x = px(plotX + value * scale);
      grid.push(
        `<line x1="${x}" y1="${plotTop - 4}" x2="${x}" y2="${px(plotBottom)}" stroke="${value === 0 ? COLORS.muted : COLORS.grid}" stroke-width="1"/>`,
        `<text x="${x}" y="${px(plotBottom + 16)}" font-size="11" text-anchor="middle" fill="${COLORS.muted}">${escapeXml(tick(value))}</text>`,
      );
    }
  }
  y = plotBottom + 34;
  lines.push(...grid, ...bars);
  lines.push(
    `<text x="${px(plotX + plotWidth / 2)}" y="${px(y)}" font-size="12" text-anchor="middle" fill="${COLORS.muted}">${escapeXml(unit)}</text>`,
  );
  y += 22;
  for (const line of [source].flat()) {
    lines.push(`<text x="${pad}" y="${px(y)}" font-size="11" fill="${COLORS.muted}">${escapeXml(line)}</text>`);
    y += 16;
  }
  const height = px(y + pad - 24);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${escapeXml(FONT)}" role="img" aria-label="${escapeXml(title)}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0.5" y="0.5" width="${width - 1}" height="${height - 1}" rx="8" fill="${COLORS.card}" stroke="${COLORS.border}"/>`,
    ...lines,
    '</svg>',
    '',
  ].join('\n');
}
