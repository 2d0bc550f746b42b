/** The official JavaScript port of VADER (vaderSentiment/vaderSentiment-js): its lexicon and rules ship in the package. */
declare module "vader-sentiment" {
  interface PolarityScores {
    neg: number;
    neu: number;
    pos: number;
    /** The normalised sum of the valences, -1 (most negative) to 1 (most positive). */
    compound: number;
  }
  const vader: { SentimentIntensityAnalyzer: { polarity_scores(text: string): PolarityScores } };
  export default vader;
}
