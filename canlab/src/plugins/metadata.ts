/**
 * Reads a plugin's metadata from its source text without running it: comments are blanked out,
 * then `PLUGIN_NAME` and `PLUGIN_VERSION` must each be assigned a string literal
 * (`const PLUGIN_NAME = 'x'`, `exports.PLUGIN_NAME = "x"`, `PLUGIN_NAME: 'x'` in an exports
 * object), and a `register` function must be declared or exported.
 */

export interface PluginMetadata {
  name: string;
  version: string;
  /** Problems that make the file unusable as a plugin (approval is refused while any remain). */
  problems: string[];
}

/** Replaces comments with spaces, leaving string literals (which may contain `//`) intact. */
function blankComments(source: string): string {
  let out = '';
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      while (i < source.length && source[i] !== '\n') i++;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      out += source.slice(i, stop).replace(/[^\n]/g, ' ');
      i = stop;
    } else if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < source.length && source[j] !== c) j += source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const STRING = String.raw`(?:'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)")`;

function constant(code: string, name: string, problems: string[]): string {
  // the literal must be the whole value: `'x' + y` is not a static name
  const found = new RegExp(String.raw`\b${name}\s*[=:]\s*${STRING}(?=[ \t]*(?:[;,}\r\n]|$))`).exec(code);
  if (found === null) {
    problems.push(
      new RegExp(String.raw`\b${name}\s*[=:]`).test(code)
        ? `${name} is not assigned a plain string literal`
        : `${name} is not declared`,
    );
    return '';
  }
  const raw = found[1] ?? found[2] ?? '';
  return raw.replace(/\\(.)/g, '$1');
}

export function readPluginMetadata(source: string): PluginMetadata {
  const code = blankComments(source);
  const problems: string[] = [];
  const name = constant(code, 'PLUGIN_NAME', problems);
  const version = constant(code, 'PLUGIN_VERSION', problems);
  if (
    !/\bfunction\s+register\s*\(|\bregister\s*[=:]\s*(?:async\s*)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)|\bregister\s*\(\s*app\b[^)]*\)\s*\{/.test(
      code,
    )
  ) {
    problems.push('no register(app) function is declared');
  }
  return { name, version, problems };
}
