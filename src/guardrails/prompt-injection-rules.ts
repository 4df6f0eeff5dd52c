/**
 * The maintained rule set of the prompt_injection guardrail: known instruction-override, role-hijack,
 * prompt-extraction and jailbreak phrasings. Patterns run on normalised text (lower case, any run of
 * non-letters collapsed to one space), so they only need single spaces, and they use literal words
 * and optional words only: no nested or unbounded repetition, hence no catastrophic backtracking.
 * A text's score is the sum of the weights of the distinct rules it matches; the guardrail triggers
 * at its threshold (0.8 by default), so one strong signal or two weaker ones are needed.
 * Add a rule here with a test in detect-prompt-injection.test.ts.
 */
export interface InjectionRule {
  id: string;
  weight: number;
  pattern: RegExp;
}

const ANY = '(?:all |any |the |your |my |these |those |every )?';
const EARLIER = '(?:previous|prior|above|earlier|preceding|former|initial|original|system|old)';
const GUIDANCE = '(?:instructions?|prompts?|rules?|directions?|guidelines?|directives?|context|commands?|constraints?|policies|policy)';

export const PROMPT_INJECTION_RULES: readonly InjectionRule[] = [
  { id: 'ignore-previous', weight: 1, pattern: new RegExp(`\\b(?:ignore|disregard|forget|skip|override|bypass|drop) ${ANY}(?:of )?${ANY}${EARLIER} ${GUIDANCE}`) },
  { id: 'ignore-everything', weight: 0.6, pattern: /\b(?:ignore|disregard|forget) (?:everything|anything|all) (?:you (?:were|have been) told|above|before|said)/ },
  { id: 'new-instructions', weight: 0.5, pattern: /\b(?:new|updated|real|actual|true) (?:system )?(?:instructions?|rules|orders|directives?)\b/ },
  { id: 'system-prompt-extraction', weight: 0.9, pattern: /\b(?:reveal|show|print|repeat|output|display|leak|tell me|give me|dump) (?:me )?(?:your |the |all |of )?(?:entire |full |whole |hidden |secret |initial |original )?(?:system (?:prompt|message|instructions?)|hidden (?:prompt|instructions?)|initial (?:prompt|instructions?)|instructions you were given)/ },
  { id: 'what-is-system-prompt', weight: 0.6, pattern: /\bwhat (?:is|are|was|were) (?:your|the) (?:system prompt|system message|initial instructions|hidden instructions)/ },
  { id: 'dan', weight: 1, pattern: /\b(?:dan|do anything now|developer mode|god mode|jailbreak(?:ed)? mode|aim mode|stan mode|dude mode)\b/ },
  { id: 'jailbreak-word', weight: 0.5, pattern: /\bjailbreak(?:s|ed|ing)?\b/ },
  { id: 'role-hijack', weight: 0.6, pattern: /\b(?:you are now|from now on you are|from now on you will|act as if you are|pretend (?:to be|you are)|roleplay as|you will now act as) (?:a |an |the )?(?:unrestricted|unfiltered|uncensored|evil|rogue|different|new|jailbroken|free)/ },
  { id: 'no-restrictions', weight: 0.7, pattern: /\b(?:without|no|free of|ignore (?:your |all |any )?) (?:any )?(?:restrictions|filters|limitations|censorship|guidelines|safety (?:guidelines|rules|filters)|content polic(?:y|ies)|ethical (?:guidelines|constraints))\b/ },
  { id: 'not-bound', weight: 0.6, pattern: /\b(?:not|no longer) (?:bound|restricted|limited) by (?:any |your |the )?(?:rules|guidelines|polic(?:y|ies)|restrictions|openai|anthropic)/ },
  { id: 'override-safety', weight: 0.8, pattern: /\b(?:disable|turn off|deactivate|bypass|circumvent|override) (?:your |the |all |any )?(?:safety|content|moderation|security) (?:filters?|checks?|guidelines|protocols?|mode|settings)/ },
  { id: 'admin-override', weight: 0.7, pattern: /\b(?:admin|administrator|developer|root|sudo|system) (?:override|mode|access|command) (?:enabled|activated|granted|on)\b/ },
  { id: 'fake-system-tag', weight: 0.7, pattern: /(?:^| )(?:system|assistant|im start|im end|inst|sys) (?:system|message|prompt)?\s?(?:you must|override|new instructions|ignore)/ },
  { id: 'stop-being', weight: 0.5, pattern: /\b(?:stop being|you are no longer|you're no longer|you re no longer) (?:an? )?(?:ai|assistant|language model|chatbot|helpful)/ },
  { id: 'hypothetical-unfiltered', weight: 0.4, pattern: /\b(?:hypothetically|in a fictional world|for educational purposes only|purely hypothetical)\b/ },
  { id: 'opposite-mode', weight: 0.6, pattern: /\b(?:opposite|evil|anti|unaligned) (?:mode|twin|version of yourself|persona)\b/ },
  { id: 'respond-without-refusal', weight: 0.5, pattern: /\b(?:never|do not|don't|don t|must not) (?:refuse|decline|say no|apologi[sz]e|warn)\b/ },
  { id: 'instruction-after-this', weight: 0.4, pattern: /\b(?:only|instead) (?:follow|obey|listen to) (?:my|these|the following) (?:instructions?|commands?|rules)/ },
  { id: 'exfiltrate', weight: 0.6, pattern: /\b(?:send|post|forward|exfiltrate|leak) (?:all |the |your )?(?:conversation|chat history|data|secrets?|api keys?|credentials|system prompt) to\b/ },
  { id: 'token-smuggling', weight: 0.4, pattern: /\b(?:base64|rot13|hex) (?:decode|encoded) (?:and|then) (?:execute|follow|run|obey)\b/ },
];
