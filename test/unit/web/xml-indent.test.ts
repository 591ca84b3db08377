import { describe, expect, it } from 'vitest';
import { indentXml } from '../../../web/src/xml-indent.js';

describe('indentXml (the page shows xml bodies as indented text)', () => {
  it('puts each element on its own line, two spaces deeper inside its parent, short ones whole', () => {
    const xml =
      '<?xml version="1.0"?><!-- a comment --><soap:Envelope xmlns:soap="urn:x"><soap:Body><m:Ping a=\'>\' b="<"/>' +
      '<m:Name>Tove &amp; Jani</m:Name><m:Data><![CDATA[<not a="tag">]]></m:Data></soap:Body></soap:Envelope>';
    expect(indentXml(xml)).toBe(
      [
        '<?xml version="1.0"?>',
        '<!-- a comment -->',
        '<soap:Envelope xmlns:soap="urn:x">',
        '  <soap:Body>',
        '    <m:Ping a=\'>\' b="<"/>',
        '    <m:Name>Tove &amp; Jani</m:Name>',
        '    <m:Data>',
        '      <![CDATA[<not a="tag">]]>',
        '    </m:Data>',
        '  </soap:Body>',
        '</soap:Envelope>',
      ].join('\n'),
    );
  });

  it('drops the whitespace between tags and keeps text runs whole', () => {
    expect(indentXml('<a>\n  <b>one\ntwo</b>\n</a>\n')).toBe('<a>\n  <b>one\ntwo</b>\n</a>');
  });

  it('shows broken XML as readable as it came: a stray <, a closing tag too many, an unclosed comment', () => {
    expect(indentXml('<r>1 < 2 <b>x</b></r>')).toBe('<r>\n  1 < 2\n  <b>x</b>\n</r>');
    expect(indentXml('</x></y><a>t</a>')).toBe('</x>\n</y>\n<a>t</a>');
    expect(indentXml('<a><!-- never closed <b>')).toBe('<a>\n  <!-- never closed <b>');
    expect(indentXml('not xml at all')).toBe('not xml at all');
    expect(indentXml('')).toBe('');
  });

  it('takes time linear in the text, whatever it holds', () => {
    for (const hostile of ['<!--'.repeat(100_000), '<a "'.repeat(100_000), '<'.repeat(400_000), '<a>'.repeat(100_000)]) {
      const started = performance.now();
      indentXml(hostile);
      // Linear: well under a second here; quadratic would take minutes.
      expect(performance.now() - started, hostile.slice(0, 8)).toBeLessThan(5000);
    }
  });
});
