import { decideSign, GTSRB_CLASSES, signTaxonomy, signTensor } from './taxonomy';

const labels = Array.from({ length: GTSRB_CLASSES }, (_, i) => `class ${i}`);

test('the taxonomy needs exactly the 43 GTSRB labels and maps each onto traffic_sign', () => {
  const tax = signTaxonomy(labels);
  expect(tax[14]).toEqual({
    gtsrb_id: 14,
    label: 'class 14',
    category: 'priority',
    ontology_class: 'traffic_sign',
  });
  expect(tax[25]!.category).toBe('warning');
  expect(tax[40]!.category).toBe('mandatory');
  expect(tax[42]!.category).toBe('end_of_restriction');
  expect(() => signTaxonomy(labels.slice(1))).toThrow(/42 classes/);
});

test('below the floor the answer is unknown, with no class', () => {
  const tax = signTaxonomy(labels);
  const probs = new Float32Array(2 * GTSRB_CLASSES);
  probs[14] = 0.95;
  probs[GTSRB_CLASSES + 3] = 0.6;
  expect(decideSign(probs, 0, tax, 0.9)).toMatchObject({
    status: 'recognized',
    gtsrb_id: 14,
    confidence: expect.closeTo(0.95),
  });
  expect(decideSign(probs, GTSRB_CLASSES, tax, 0.9)).toEqual({
    status: 'unknown',
    confidence: expect.closeTo(0.6),
  });
});

test('the sign tensor is RGB / 255 in place', () => {
  const out = new Float32Array(5);
  signTensor(new Uint8Array([255, 0, 51]), out, 2);
  expect(Array.from(out)).toEqual([0, 0, 1, 0, Math.fround(0.2)]);
});
