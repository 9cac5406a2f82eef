import { csvField, toCsv } from '../../src/lib/csv';

describe('CSV', () => {
  it('quotes fields with commas, quotes or line breaks, and ends every row with CRLF', () => {
    expect(toCsv(['a', 'b'], [['x,y', 'say "hi"'], ['line\nbreak', null]])).toBe('a,b\r\n"x,y","say ""hi"""\r\n"line\nbreak",\r\n');
  });

  it('defuses spreadsheet formulas but leaves numbers alone', () => {
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField('+1 555')).toBe("'+1 555");
    expect(csvField('-15.00')).toBe('-15.00');
    expect(csvField(-3)).toBe('-3');
    expect(csvField(true)).toBe('true');
  });
});
