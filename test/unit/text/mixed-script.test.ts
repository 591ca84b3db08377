import { describe, expect, it } from 'vitest';
import { mixedScripts, scriptsOf } from '../../../src/platform/text/mixed-script.js';

describe('mixed scripts in a name', () => {
  it.each([
    // Lookalike letters written as escapes, so that this file reads as what it holds.
    ['Latin with a Cyrillic dze (U+0455)', '\u0455tripe', ['Cyrillic', 'Latin']],
    ['Latin with a Cyrillic o', 'githu\u042c-pr\u043ed', ['Latin', 'Cyrillic']],
    ['Latin with a Greek omicron', 'sh\u03bfpify', ['Latin', 'Greek']],
    ['Latin with an Armenian letter', 'payp\u0430l-\u0585', ['Latin', 'Cyrillic', 'Armenian']],
    ['Latin with a Cherokee letter', '\u13aapple', ['Cherokee', 'Latin']],
    ['Latin with a letter of a script not listed by name', 'abc\u{10450}', ['Latin', 'another script']],
    ['Cyrillic with Greek', 'Москва-Αθήνα', ['Cyrillic', 'Greek']],
  ])('marks %s', (_label, name, scripts) => {
    expect(mixedScripts(name)).toEqual(scripts);
  });

  it.each([
    ['plain Latin', 'stripe'],
    ['Latin with digits, punctuation, spaces and symbols', 'shop_42 (EU) €+-./:@'],
    ['Latin with accents, precomposed or combining', 'café-Zürich-cafe\u0301'],
    ['all Cyrillic', 'Москва'],
    ['all Greek', 'Αθήνα'],
    ['Japanese with Latin', 'LINE通知-テスト-ひらがな'],
    ['Chinese with Bopomofo and Latin', 'wechat微信ㄅ'],
    ['Korean with Han and Latin', 'kakao카카오漢'],
    ['Arabic', 'مرحبا-123'],
    ['emoji and Latin', 'alerts-🚨'],
    ['no letters at all', '12345-_.'],
    ['an invisible character (shown as an escape instead)', 'stripe\u200b'],
  ])('leaves %s unmarked', (_label, name) => {
    expect(mixedScripts(name)).toBeUndefined();
  });

  it('names the scripts in the order their letters come', () => {
    expect(scriptsOf('aЖb')).toEqual(['Latin', 'Cyrillic']);
    expect(scriptsOf('1-2')).toEqual([]);
  });
});
