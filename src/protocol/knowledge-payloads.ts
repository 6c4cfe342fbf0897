// AEP-0002's retrieval and assessment payloads (resource.*, assessment.*): observed from hosts
// that report them, never produced by a vendor table here; apart so the core list stays readable.
import { anyObject, arrayOf, int, num, obj, oneOf, str } from './shape.js';

const R = 'redacted' as const;
const F = 'full' as const;
const document = obj(
  {},
  { id: str(), score: num(), content_redacted: str().at(R), content: str().at(F), metadata: anyObject() },
);
const span = obj({}, { start: int(), end: int() });

export const KNOWLEDGE_PAYLOADS = {
  'resource.retrieval.requested': obj(
    {},
    { query: str().at(R), query_digest: str(), corpus: str(), top_k: int({ min: 0 }) },
  ),
  'resource.retrieval.returned': obj(
    {},
    {
      documents: arrayOf(document),
      count: int({ min: 0 }),
      corpus: str(),
      duration_ms: int({ min: 0 }),
    },
  ),
  'resource.retrieval.reranked': obj(
    {},
    {
      query: str().at(R),
      query_digest: str(),
      model: str(),
      top_k: int({ min: 0 }),
      input_documents: arrayOf(document),
      output_documents: arrayOf(document),
      count: int({ min: 0 }),
      duration_ms: int({ min: 0 }),
    },
  ),
  'resource.citation.recorded': obj(
    {},
    {
      citations: arrayOf(
        obj(
          {},
          {
            source: obj({}, { id: str(), uri: str().at(R), title: str().at(R) }),
            cited_text_redacted: str().at(R),
            cited_text: str().at(F),
            offset: obj(
              {},
              {
                char: span,
                page: obj({}, { page: int(), start: int(), end: int() }),
                block: obj({}, { block: int(), start: int(), end: int() }),
              },
            ),
            document_index: int({ min: 0 }),
          },
        ),
      ),
      count: int({ min: 0 }),
    },
  ),
  'assessment.evaluation.recorded': obj(
    {},
    {
      'gen_ai.evaluation.name': str(),
      'gen_ai.evaluation.score.value': num(),
      'gen_ai.evaluation.score.label': str(),
      'gen_ai.evaluation.explanation': str().at(R),
      evaluator: str(),
    },
  ),
  'assessment.feedback.received': obj(
    {},
    { rating: num(), label: str(), comment: str().at(R), correction: str().at(R), source: str() },
  ),
  'assessment.guardrail.recorded': obj(
    {},
    {
      guardrail: obj(
        {},
        {
          stage: oneOf(['input', 'output']),
          verdict: oneOf(['allowed', 'flagged', 'blocked', 'modified']),
          categories: arrayOf(obj({}, { name: str(), score: num() })),
          detector: obj({}, { name: str(), version: str() }),
          explanation: str().at(R),
        },
      ),
    },
  ),
};
