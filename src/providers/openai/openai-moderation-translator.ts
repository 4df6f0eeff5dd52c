import { z } from 'zod';
import type { ModerationRequest, ModerationResponse } from '../../protocol/moderations.js';
import { parseUpstreamBody } from '../http/parse-upstream-body.js';
import type { OperationTranslator } from '../http/provider-adapter.js';
import { openaiHeaders, openaiUrl } from './openai-endpoint.js';

const moderationSchema = z.looseObject({
  id: z.string().nullish(),
  results: z.array(
    z.looseObject({
      flagged: z.boolean(),
      categories: z.record(z.string(), z.boolean()),
      category_scores: z.record(z.string(), z.number()),
    }),
  ),
});

/** POST /moderations (https://platform.openai.com/docs/api-reference/moderations). Free upstream, so no usage. */
export const openaiModerationTranslator: OperationTranslator<ModerationRequest> = {
  buildRequest(request, context) {
    return {
      method: 'POST',
      url: openaiUrl(context.target, '/moderations'),
      headers: openaiHeaders(context.target, 'application/json'),
      body: JSON.stringify({ model: context.target.upstreamModel, input: request.input }),
    };
  },
  parseResponse(body, context) {
    const parsed = parseUpstreamBody(moderationSchema, body, 'openai', 'The openai upstream answered with an unreadable moderation result');
    const response: ModerationResponse = {
      id: parsed.id ?? `modr-${context.requestId}`,
      model: context.model,
      // category_applied_input_types and other extra fields are left out of our shape.
      results: parsed.results.map(({ flagged, categories, category_scores }) => ({ flagged, categories, category_scores })),
    };
    return { body: response };
  },
};
