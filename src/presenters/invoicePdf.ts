/**
 * An invoice as a PDF document (pdfkit): its id as its number, who bills whom, the lines and
 * totals, the payments received and what remains due; VOID across a canceled one. Text is set
 * in a font shipped from npm (DejaVu Sans, which covers accented Latin and Cyrillic), embedded
 * as a subset with its Unicode map, so the text reads back (and copies) as written.
 */
import PDFDocument from 'pdfkit';

export interface PdfFonts {
  regular: Buffer;
  bold: Buffer;
}

export interface InvoicePdfView {
  number: string;
  status: string;
  /** `YYYY-MM-DD`. */
  issued: string;
  due_date: string;
  period: { start: string; end: string | null } | null;
  account_name: string;
  customer: { name: string | null; email: string | null };
  line_items: { product_name: string; description: string | null; quantity: number; unit_amount: string; amount: string }[];
  total_amount: string;
  amount_paid: string;
  amount_due: string;
  payments: { date: string; amount_applied: string; currency: string | null; amount: string | null; transaction_hash: string | null }[];
  /** The document's creation date (its last change), so that the same invoice makes the same PDF. */
  created: Date;
}

const STATUS_WORDS: Record<string, string> = { pending: 'Open', overdue: 'Overdue', paid: 'Paid', canceled: 'Void' };

const MARGIN = 50;
const INK = '#1d1d1f';
const MUTED = '#545458';
const RULE = '#c8c8cc';
const VOID_RED = '#b3261e';

/** A table column: where it starts, how wide, how its cells align. */
interface Column {
  x: number;
  width: number;
  align: 'left' | 'right';
}

export function renderInvoicePdf(view: InvoicePdfView, fonts: PdfFonts): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    margin: MARGIN,
    // The shipped font from the start: no standard PDF font (which covers neither Cyrillic nor much else) is loaded.
    font: fonts.regular as unknown as string,
    info: { Title: `Invoice ${view.number}`, Author: view.account_name, Subject: `Invoice ${view.number}`, CreationDate: view.created },
  });
  doc.registerFont('regular', fonts.regular);
  doc.registerFont('bold', fonts.bold);
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on('data', (c: Buffer) => chunks.push(c));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
  });

  const left = MARGIN;
  const right = doc.page.width - MARGIN;
  const width = right - left;
  const bottom = () => doc.page.height - MARGIN;
  let y = MARGIN;

  /** Room for `h` more points on this page, else a new page. */
  const room = (h: number) => {
    if (y + h > bottom()) {
      doc.addPage();
      y = MARGIN;
    }
  };
  /** `oneLine`: smaller type rather than a wrap (an id, a hash: found whole when searched). */
  const text = (s: string, x: number, w: number, opts: { font?: 'regular' | 'bold'; size?: number; color?: string; align?: 'left' | 'right'; oneLine?: boolean } = {}) => {
    doc.font(opts.font ?? 'regular').fontSize(opts.size ?? 10).fillColor(opts.color ?? INK);
    if (opts.oneLine) {
      const wide = doc.widthOfString(s);
      if (wide > w) doc.fontSize(Math.floor(((opts.size ?? 10) * w * 10) / wide) / 10);
    }
    doc.text(s, x, y, { width: w, align: opts.align ?? 'left' });
    return doc.heightOfString(s, { width: w });
  };
  const rule = () => {
    doc.moveTo(left, y).lineTo(right, y).lineWidth(0.5).strokeColor(RULE).stroke();
  };
  /** One row of cells, the tallest cell setting its height; `note`: one line in small print under the cells from the second on. */
  const row = (cols: Column[], cells: string[], font: 'regular' | 'bold' = 'regular', note?: string) => {
    doc.font(font).fontSize(10);
    const h = Math.max(...cells.map((c, n) => doc.heightOfString(c, { width: cols[n].width }))) + 8;
    doc.fontSize(8);
    const noteHeight = note ? doc.heightOfString(note, { width: right - cols[1].x }) + 2 : 0;
    room(h + noteHeight);
    y += 4;
    cells.forEach((c, n) => text(c, cols[n].x, cols[n].width, { font, align: cols[n].align }));
    y += h - 4;
    if (note) y += text(note, cols[1].x, right - cols[1].x, { size: 8, color: MUTED, oneLine: true }) + 2;
    rule();
  };

  // Heading: the document's name (VOID across a canceled invoice), then who bills, full width.
  const isVoid = view.status === 'canceled';
  text('INVOICE', left, width / 2, { font: 'bold', size: 20 });
  if (isVoid) text('VOID', left + width / 2, width / 2, { font: 'bold', size: 28, color: VOID_RED, align: 'right' });
  y += isVoid ? 38 : 30;
  y += text(view.account_name || ' ', left, width, { font: 'bold', size: 14 }) + 16;

  // What it is and when, and whom it bills.
  const facts: [string, string][] = [
    ['Invoice number', view.number],
    ['Issued', view.issued],
    ['Due date', view.due_date],
    ['Status', STATUS_WORDS[view.status] ?? view.status],
  ];
  if (view.period) facts.push(['Period', `${view.period.start} – ${view.period.end ?? 'open'}`]);
  const factsWidth = width * 0.6;
  const factsTop = y;
  for (const [label, value] of facts) {
    text(label, left, 90, { color: MUTED });
    y += text(value, left + 95, factsWidth - 100, { font: 'bold', oneLine: true }) + 3;
  }
  const factsBottom = y;
  y = factsTop;
  const billTo = left + factsWidth;
  const billToWidth = width - factsWidth;
  y += text('Bill to', billTo, billToWidth, { color: MUTED }) + 2;
  if (view.customer.name) y += text(view.customer.name, billTo, billToWidth, { font: 'bold' }) + 2;
  if (view.customer.email) y += text(view.customer.email, billTo, billToWidth) + 2;
  y = Math.max(y, factsBottom) + 18;

  if (isVoid) {
    y += text('This invoice is VOID: it was canceled and nothing is due.', left, width, { font: 'bold', color: VOID_RED }) + 14;
  }

  // The lines.
  const lineCols: Column[] = [
    { x: left, width: width - 250, align: 'left' },
    { x: right - 245, width: 45, align: 'right' },
    { x: right - 195, width: 95, align: 'right' },
    { x: right - 95, width: 95, align: 'right' },
  ];
  row(lineCols, ['Description', 'Qty', 'Unit price (USD)', 'Amount (USD)'], 'bold');
  for (const l of view.line_items) {
    row(lineCols, [l.description ? `${l.product_name}\n${l.description}` : l.product_name, String(l.quantity), l.unit_amount, l.amount]);
  }
  if (view.line_items.length === 0) row(lineCols, ['No line items', '', '', '']);

  // Totals, right-aligned under the amounts.
  y += 8;
  const totals: [string, string, 'regular' | 'bold'][] = [
    ['Total', `${view.total_amount} USD`, 'regular'],
    ['Paid', `${view.amount_paid} USD`, 'regular'],
    ['Amount due', `${view.amount_due} USD`, 'bold'],
  ];
  for (const [label, value, font] of totals) {
    room(18);
    text(label, right - 250, 140, { font, align: 'right' });
    text(value, right - 105, 105, { font, align: 'right' });
    y += 18;
  }

  // Payments received.
  y += 14;
  room(40);
  y += text('Payments received', left, width, { font: 'bold', size: 12 }) + 6;
  if (view.payments.length === 0) {
    y += text('None recorded.', left, width, { color: MUTED }) + 4;
  } else {
    const payCols: Column[] = [
      { x: left, width: 80, align: 'left' },
      { x: left + 85, width: width - 190, align: 'left' },
      { x: right - 100, width: 100, align: 'right' },
    ];
    row(payCols, ['Date', 'Paid with', 'Applied (USD)'], 'bold');
    for (const p of view.payments) {
      // The hash in small print across the row, so that it stays on one line (and is found whole).
      row(payCols, [p.date.slice(0, 10), p.currency ? `${p.amount} ${p.currency}` : 'Payment', p.amount_applied], 'regular', p.transaction_hash ? `Transaction ${p.transaction_hash}` : undefined);
    }
  }

  doc.end();
  return done;
}
