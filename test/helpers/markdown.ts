/** Just enough Markdown for the documentation tests: fenced blocks, headings and their anchors, links. */

export interface FencedBlock {
  lang: string;
  text: string;
  /** 1-based line of the opening fence */
  line: number;
}

/** The lines of a document with their fenced-code status: code lines are neither headings nor links. */
const scan = (markdown: string): Array<{ text: string; line: number; inFence: boolean; fence?: 'open' | 'close'; lang?: string }> => {
  const out: Array<{ text: string; line: number; inFence: boolean; fence?: 'open' | 'close'; lang?: string }> = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(text);
    if (fence === undefined && marker) {
      fence = marker[1];
      out.push({ text, line: i + 1, inFence: true, fence: 'open', lang: marker[2] ?? '' });
    } else if (fence !== undefined && marker?.[1]?.startsWith(fence) && text.trim() === marker[1]) {
      fence = undefined;
      out.push({ text, line: i + 1, inFence: true, fence: 'close' });
    } else out.push({ text, line: i + 1, inFence: fence !== undefined });
  });
  return out;
};

export const fencedBlocks = (markdown: string): FencedBlock[] => {
  const blocks: FencedBlock[] = [];
  let current: (FencedBlock & { lines: string[] }) | undefined;
  for (const l of scan(markdown)) {
    if (l.fence === 'open') current = { lang: l.lang ?? '', text: '', line: l.line, lines: [] };
    else if (l.fence === 'close' && current) {
      blocks.push({ lang: current.lang, text: current.lines.join('\n'), line: current.line });
      current = undefined;
    } else if (current) current.lines.push(l.text);
  }
  return blocks;
};

/** The text from a `## title` heading to the next heading of the same or a higher level. */
export const section = (markdown: string, title: string): string => {
  const lines = scan(markdown);
  const start = lines.findIndex((l) => !l.inFence && /^#+\s/.test(l.text) && l.text.replace(/^#+\s+/, '').trim() === title);
  if (start < 0) throw new Error(`no section "${title}"`);
  const level = (/^#+/.exec(lines[start]?.text ?? '') ?? [''])[0].length;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i];
    const hashes = l && !l.inFence ? /^(#+)\s/.exec(l.text) : null;
    if (hashes?.[1] && hashes[1].length <= level) {
      end = i;
      break;
    }
  }
  return lines
    .slice(start, end)
    .map((l) => l.text)
    .join('\n');
};

/** GitHub's anchor for a heading: lower case, punctuation dropped (hyphens and underscores kept), spaces to hyphens. */
export const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** Every anchor a document's headings give, with GitHub's -1, -2 suffixes for repeated ones. */
export const anchors = (markdown: string): Set<string> => {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const l of scan(markdown)) {
    const m = l.inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(l.text);
    if (!m?.[1]) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
};

/** Inline links and images outside code: `[text](target)` and `![alt](target)`, with their line. */
export const links = (markdown: string): Array<{ target: string; line: number }> => {
  const out: Array<{ target: string; line: number }> = [];
  for (const l of scan(markdown)) {
    if (l.inFence) continue;
    const text = l.text.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) if (m[1]) out.push({ target: m[1], line: l.line });
  }
  return out;
};
