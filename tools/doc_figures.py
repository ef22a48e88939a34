#!/usr/bin/env python3
"""Figures quoted in prose, checked against the command that computes them.

README.md and docs/*.md quote figures from `commscale fit-compute`, `accuracy` and `fit-step` in
their sentences and hand-made tables (the listings are checked apart: tests/cli/cli_readme.cpp). Each
such figure carries, right after it, an HTML comment naming where it comes from, which Markdown
renders as nothing:

    within 4.2%<!-- fig: fit-compute,data/calibration/published_runs.csv dense.leave_one_model_out -->

    SOURCE  the command's arguments joined by commas (no spaces); it runs as `commscale ARGS --json`
            from the repository root
    KEY     a path into that JSON: names joined by '.', and on a list a selector in brackets,
            [TEXT] the element whose family or name is TEXT, or whose label contains it,
            [FIELD=VALUE] every element whose FIELD is VALUE (True/False for booleans), or
            [FIELD~=TEXT] every element whose FIELD contains TEXT; a path may end in a per-run
            error (`error:COLUMN`, COLUMN / measured tokens/s - 1, fit-compute's runs) and be
            wrapped in median_abs(...), mean_abs(...), max_abs(...) (of the absolute values), min(...)
            or max(...) (signed) over the runs it selects.

The figure is compared as written: a trailing % means the value times 100, the written decimals
are the precision, and a written sign (+ or -) is kept. `check` (the ctest `docs: figures quoted
in the prose match what the commands print`) fails on any difference, naming the file, line, key, the written and the computed
figure; `write` (tools/regen_docs.py runs it) rewrites them.

usage: doc_figures.py check|write REPO COMMSCALE
"""
import glob, json, os, re, statistics, subprocess, sys

FIGURE = re.compile(r'([+-]?)(\d[\d,]*(?:\.\d+)?)(%?)<!-- fig: (\S+) (.+?) -->')


def selector(items, sel, where):
    if '~=' in sel:
        field, value = sel.split('~=', 1)
        out = [x for x in items if value in str(x.get(field))]
    elif '=' in sel:
        field, value = sel.split('=', 1)
        out = [x for x in items if str(x.get(field)) == value]
    else:
        out = [x for x in items if sel in (x.get('family'), x.get('name'))] or \
              [x for x in items if sel in str(x.get('label', ''))]
        if len(out) == 1:
            return out[0]
    if not out:
        raise KeyError('%s: no element [%s]' % (where, sel))
    return out


def split_path(path):
    parts, depth, cur = [], 0, ''
    for ch in path:
        if ch == '.' and depth == 0:
            parts.append(cur); cur = ''
            continue
        depth += ch == '['
        depth -= ch == ']'
        cur += ch
    return parts + [cur]


def resolve(doc, key):
    """The number `key` names in `doc` (module docstring)."""
    m = re.fullmatch(r'(median_abs|mean_abs|max_abs|min|max)\((.+)\)', key)
    if m:
        values = resolve(doc, m.group(2))
        values = values if isinstance(values, list) else [values]
        f = {'median_abs': statistics.median, 'mean_abs': statistics.fmean, 'max_abs': max, 'min': min, 'max': max}
        return f[m.group(1)]([abs(v) for v in values] if m.group(1).endswith('_abs') else values)
    node = doc
    for part in split_path(key):
        if isinstance(node, list) and part.startswith('error:'):
            col = part[len('error:'):]
            return [r[col] / r['measured_tokens_per_s_per_gpu'] - 1.0 for r in node]
        if part.startswith('error:'):
            return node[part[len('error:'):]] / node['measured_tokens_per_s_per_gpu'] - 1.0
        name, _, sel = part.partition('[')
        if name:
            if isinstance(node, list):  # the elements that have it (accuracy's refused runs have no error)
                node = [x[name] for x in node if name in x]
            else:
                node = node[name]
        if sel:
            node = selector(node, sel[:-1], key)
    if not isinstance(node, (int, float)) and not (isinstance(node, list) and node):
        raise KeyError('%s: not a number (%s)' % (key, type(node).__name__))
    return node


def formatted(value, sign, digits, percent):
    """`value` written as the document writes it: sign, digits, decimals, percent."""
    v = value * 100.0 if percent else value
    decimals = len(digits.split('.')[1]) if '.' in digits else 0
    text = '%.*f' % (decimals, abs(v))
    if ',' in digits:
        whole, _, frac = text.partition('.')
        text = '{:,}'.format(int(whole)) + ('.' + frac if frac else '')
    if sign or v < 0:
        s = '-' if v < 0 and float(text.replace(',', '')) != 0 else ('+' if sign else '')
        text = s + text
    return text


def run(root, exe):
    cache = {}

    def source(name):
        if name not in cache:
            args = name.split(',') + ['--json']
            out = subprocess.run([exe] + args, cwd=root, capture_output=True, text=True)
            if out.returncode != 0:
                raise KeyError('commscale %s: exit %d: %s' % (' '.join(args), out.returncode, out.stderr.strip()))
            cache[name] = json.loads(out.stdout)
        return cache[name]

    files = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs', '*.md')))
    results = []  # (path, line, match, computed text or None, error)
    for path in files:
        text = open(path, encoding='utf-8').read()
        for m in FIGURE.finditer(text):
            sign, digits, percent, src, key = m.groups()
            line = text.count('\n', 0, m.start()) + 1
            try:
                value = resolve(source(src), key)
                if isinstance(value, list):
                    raise KeyError('%s: selects %d values; wrap it in median_abs(...) or mean_abs(...)' % (key, len(value)))
                results.append((path, line, m, formatted(value, sign, digits, percent) + percent, None))
            except (KeyError, IndexError, TypeError, ValueError) as e:
                results.append((path, line, m, None, str(e)))
    return results


def main(argv):
    if len(argv) != 4 or argv[1] not in ('check', 'write'):
        sys.exit(__doc__.strip().split('\n')[-1])
    mode, root, exe = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    results = run(root, exe)
    bad = 0
    for path, line, m, computed, error in results:
        rel = os.path.relpath(path, root)
        written = m.group(1) + m.group(2) + m.group(3)
        if error:
            print('%s:%d: %s %s: %s' % (rel, line, m.group(4), m.group(5), error))
            bad += 1
        elif computed != written and mode == 'check':
            print('%s:%d: %s %s: written %s, computed %s' % (rel, line, m.group(4), m.group(5), written, computed))
            bad += 1
    if mode == 'write':
        by_file = {}
        for path, line, m, computed, error in results:
            if computed is not None:
                by_file.setdefault(path, []).append((m, computed))
        for path, items in by_file.items():
            text = open(path, encoding='utf-8').read()
            for m, computed in sorted(items, key=lambda x: -x[0].start()):
                text = text[:m.start()] + computed + text[m.start(4) - len('<!-- fig: '):]
            open(path, 'w', encoding='utf-8').write(text)
    print('%d figure(s) quoted in the prose, %d %s' % (len(results), bad, 'wrong' if mode == 'check' else 'unresolved'))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
