// Write a Word document: a heading, then one paragraph per further argument.
// node scripts/letter.js letter.docx "Dear Ada" "Thank you for the engines."
const fs = require('fs');
const { Document, HeadingLevel, Packer, Paragraph } = require('docx');

const [output, heading, ...paragraphs] = process.argv.slice(2);
const children = [
  new Paragraph({ text: heading, heading: HeadingLevel.HEADING_1 }),
  ...paragraphs.map((text) => new Paragraph({ text })),
];
Packer.toBuffer(new Document({ sections: [{ children }] })).then((data) => {
  fs.writeFileSync(output, data);
  console.log(`wrote ${output}: ${children.length} paragraphs`);
});
