import { element, escapeAttribute, formatNumber, serializeXml } from './xml';

describe('xml writer', () => {
  it('escapes markup and keeps tab, LF and CR as character references', () => {
    expect(escapeAttribute(`a<b>&"c'\t\n\r`)).toBe("a&lt;b&gt;&amp;&quot;c'&#9;&#10;&#13;");
  });

  it('replaces characters XML 1.0 cannot carry, keeping paired surrogates', () => {
    expect(escapeAttribute('a\u0000b\u0001c\u001Fd\uFFFEe\uFFFF')).toBe(
      'a\uFFFDb\uFFFDc\uFFFDd\uFFFDe\uFFFD',
    );
    expect(escapeAttribute('lone \uD800 and \uDC00')).toBe('lone \uFFFD and \uFFFD');
    expect(escapeAttribute('pair 😀')).toBe('pair 😀');
  });

  it('writes numbers that read back exactly and refuses non-finite ones', () => {
    expect(formatNumber(1.5)).toBe('1.5');
    expect(formatNumber(-0)).toBe('0');
    expect(Number(formatNumber(0.1 + 0.2))).toBe(0.1 + 0.2);
    expect(() => formatNumber(Number.NaN)).toThrow(/finite/);
    expect(() => formatNumber(Infinity)).toThrow(/finite/);
  });

  it('serialises nested elements, self-closing the empty ones, skipping absent children and attributes', () => {
    const doc = serializeXml(
      element('Root', { a: 'x & y', n: 2, b: false, skipped: undefined, gone: null }, [
        element('Empty'),
        null,
        false,
        element('Outer', {}, [element('Inner', { v: 0.25 })]),
      ]),
    );
    expect(doc).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<Root a="x &amp; y" n="2" b="false">',
        '  <Empty/>',
        '  <Outer>',
        '    <Inner v="0.25"/>',
        '  </Outer>',
        '</Root>',
        '',
      ].join('\n'),
    );
  });

  it('refuses names that are not XML names', () => {
    expect(() => element('has space')).toThrow(/XML name/);
    expect(() => element('A', { 'x"y': 1 })).toThrow(/attribute name/);
  });
});
