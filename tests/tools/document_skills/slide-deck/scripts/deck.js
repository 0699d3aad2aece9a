// Make a one-slide 16:9 deck (10 x 5.625 inches): the title at the top, a red box at the bottom right.
// node scripts/deck.js deck.pptx "Quarterly results"
const pptxgen = require('pptxgenjs');

const [output, title] = process.argv.slice(2);
const deck = new pptxgen();
deck.layout = 'LAYOUT_16x9';
const slide = deck.addSlide();
slide.background = { color: 'FFFFFF' };
slide.addText(title, { x: 0.5, y: 0.3, w: 9, h: 1, fontSize: 40, bold: true, color: '000000' });
slide.addShape(deck.ShapeType.rect, { x: 6, y: 3, w: 3, h: 2, fill: { color: 'FF0000' }, line: { color: 'FF0000' } });
deck.writeFile({ fileName: output }).then((name) => console.log(`wrote ${name}: 1 slide, "${title}"`));
