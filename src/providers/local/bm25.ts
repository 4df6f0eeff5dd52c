/** Okapi BM25 parameters as commonly used (Robertson & Zaragoza, "The Probabilistic Relevance Framework"). */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

export function bm25Terms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** BM25 score of every document for the query, in document order. */
export function bm25Scores(query: string, documents: readonly string[]): number[] {
  const queryTerms = [...new Set(bm25Terms(query))];
  const documentTerms = documents.map(bm25Terms);
  const count = documents.length;
  const averageLength = documentTerms.reduce((sum, terms) => sum + terms.length, 0) / Math.max(1, count) || 1;
  const frequencies = documentTerms.map((terms) => {
    const frequency = new Map<string, number>();
    for (const term of terms) frequency.set(term, (frequency.get(term) ?? 0) + 1);
    return frequency;
  });
  // The "+1" inside the log keeps idf positive for terms in more than half the documents (Lucene's variant).
  const idf = new Map<string, number>();
  for (const term of queryTerms) {
    const documentFrequency = frequencies.reduce((sum, frequency) => sum + (frequency.has(term) ? 1 : 0), 0);
    idf.set(term, Math.log(1 + (count - documentFrequency + 0.5) / (documentFrequency + 0.5)));
  }
  return frequencies.map((frequency, index) => {
    const lengthRatio = documentTerms[index].length / averageLength;
    let score = 0;
    for (const term of queryTerms) {
      const termFrequency = frequency.get(term) ?? 0;
      if (termFrequency === 0) continue;
      score += (idf.get(term) ?? 0) * ((termFrequency * (BM25_K1 + 1)) / (termFrequency + BM25_K1 * (1 - BM25_B + BM25_B * lengthRatio)));
    }
    return score;
  });
}
