import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, links } from './helpers/markdown.ts';

const root = resolve(import.meta.dirname, '..');
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

describe('the README and docs/', () => {
  it('every relative link resolves to a file in the repository, and every #anchor to a heading', () => {
    const broken: string[] = [];
    for (const doc of documents) {
      const path = join(root, doc);
      const markdown = readFileSync(path, 'utf8');
      for (const { target, line } of links(markdown)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [file = '', anchor] = target.split('#');
        const resolved = file === '' ? path : resolve(dirname(path), decodeURIComponent(file));
        const where = `${doc}:${line} ${target}`;
        if (!resolved.startsWith(root) || !existsSync(resolved)) {
          broken.push(`${where}: no file ${relative(root, resolved)}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) {
          broken.push(`${where}: an anchor into a file that is not Markdown`);
          continue;
        }
        if (!anchors(readFileSync(resolved, 'utf8')).has(anchor)) broken.push(`${where}: no heading #${anchor}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README stays short', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
  });

  it('docs/README.md, the index, links every page of docs/', () => {
    const index = readFileSync(join(root, 'docs/README.md'), 'utf8');
    const linked = new Set(links(index).map((l) => l.target.split('#')[0]));
    const pages = documents.filter((d) => d.startsWith('docs/') && d !== 'docs/README.md').map((d) => d.slice('docs/'.length));
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
  });
});

describe('the repository', () => {
  it('names no document that is not in it, in any tracked file (docs, code comments, the OpenAPI description, tests)', () => {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
    const names = new Set(tracked.map((path) => basename(path)));
    const outside: string[] = [];
    for (const path of tracked) {
      if (!existsSync(join(root, path)) || path === 'package-lock.json') continue;
      const text = readFileSync(join(root, path));
      if (text.includes(0)) continue; // images, fonts
      text
        .toString('utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const [name] of line.matchAll(/[A-Za-z0-9_][A-Za-z0-9_.-]*\.md\b/g)) {
            if (!names.has(name)) outside.push(`${path}:${index + 1} ${name}`);
          }
        });
    }
    expect(outside).toEqual([]);
  });
});
