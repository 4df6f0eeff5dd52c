import type { ModerationCategory } from '../../protocol/moderations.js';

/**
 * Phrases that raise each OpenAI moderation category in the local keyword moderator. Matching is
 * case-insensitive on word boundaries; a trailing `*` matches any word ending. Deliberately small
 * and mild: the point is deterministic, testable behaviour, not coverage.
 */
export const MODERATION_LEXICON: Readonly<Record<ModerationCategory, readonly string[]>> = {
  harassment: ['idiot*', 'stupid', 'loser*', 'moron*', 'shut up', 'nobody likes you', 'pathetic', 'worthless'],
  'harassment/threatening': ['i will hurt you', 'i will find you', 'you will regret', 'watch your back', 'i will kill you'],
  hate: ['subhuman*', 'inferior race', 'racial purity', 'go back to your country', 'hate all', 'ethnic cleansing'],
  'hate/threatening': ['exterminate them', 'wipe them out', 'ethnic cleansing'],
  illicit: ['buy drugs', 'sell drugs', 'launder money', 'money laundering', 'counterfeit*', 'steal a car', 'shoplift*', 'pick a lock'],
  'illicit/violent': ['build a bomb', 'make a bomb', 'pipe bomb', 'make a weapon', 'buy a gun illegally', 'poison someone'],
  'self-harm': ['self-harm', 'self harm', 'hurt myself', 'cut myself', 'suicid*', 'overdose'],
  'self-harm/intent': ['i want to die', 'kill myself', 'end my life', 'i will hurt myself'],
  'self-harm/instructions': ['how to kill myself', 'ways to hurt myself', 'how to overdose', 'painless way to die'],
  sexual: ['porn*', 'explicit sex', 'nude*', 'naked', 'sexual*', 'erotic*'],
  'sexual/minors': ['underage sex', 'child porn*', 'sexual minor*'],
  violence: ['kill*', 'murder*', 'stab*', 'shoot*', 'attack*', 'beat up', 'assault*', 'torture*'],
  'violence/graphic': ['gore', 'gory', 'dismember*', 'decapitat*', 'blood everywhere', 'mutilat*', 'disembowel*'],
};
