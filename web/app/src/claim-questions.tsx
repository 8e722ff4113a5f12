import { useId } from 'react';

/** A yes/no question not yet answered is undefined. */
export interface Answers {
  readonly injuries: boolean | undefined;
  readonly other_vehicles: boolean | undefined;
  readonly police_attended: boolean | undefined;
  readonly description: string;
  readonly other_parties: string;
}

export const NO_ANSWERS: Answers = {
  injuries: undefined,
  other_vehicles: undefined,
  police_attended: undefined,
  description: '',
  other_parties: '',
};

type YesNo = 'injuries' | 'other_vehicles' | 'police_attended';

const QUESTIONS: ReadonlyArray<{ key: YesNo; text: string }> = [
  { key: 'injuries', text: 'Was anyone hurt?' },
  { key: 'other_vehicles', text: 'Were other vehicles involved?' },
  { key: 'police_attended', text: 'Did the police attend?' },
];

/** The problems less those of the answers that changed: a problem stays only until its answer is changed. */
export function settle<K extends string>(
  problems: Partial<Record<K, string>>,
  before: Answers,
  after: Answers,
): Partial<Record<K, string>> {
  return Object.fromEntries(
    Object.entries(problems).filter(
      ([key]) => !(key in after) || before[key as keyof Answers] === after[key as keyof Answers],
    ),
  ) as Partial<Record<K, string>>;
}

/** The service's longest free text (claim-schemas.ts). */
export const MAX_TEXT = 5000;

/**
 * The answers checked in words before anything is sent: each problem keyed by its question, or the body's
 * fields when all is well. `descriptionRequired`: a report needs it; a crash's confirmation does not.
 */
export function checkAnswers(
  answers: Answers,
  descriptionRequired: boolean,
):
  | {
      ok: true;
      body: {
        injuries: boolean;
        other_vehicles: boolean;
        police_attended: boolean;
        description?: string;
        other_parties?: string;
      };
    }
  | { ok: false; problems: Partial<Record<keyof Answers, string>> } {
  const problems: Partial<Record<keyof Answers, string>> = {};
  for (const question of QUESTIONS)
    if (answers[question.key] === undefined) problems[question.key] = `Answer yes or no: ${question.text}`;
  const description = answers.description.trim();
  const otherParties = answers.other_parties.trim();
  if (descriptionRequired && description === '')
    problems.description = 'Tell us what happened, in a few words.';
  if (description.length > MAX_TEXT)
    problems.description = `Please keep this to ${String(MAX_TEXT)} characters.`;
  if (otherParties.length > MAX_TEXT)
    problems.other_parties = `Please keep this to ${String(MAX_TEXT)} characters.`;
  const { injuries, other_vehicles: otherVehicles, police_attended: police } = answers;
  if (
    Object.keys(problems).length > 0 ||
    injuries === undefined ||
    otherVehicles === undefined ||
    police === undefined
  )
    return { ok: false, problems };
  return {
    ok: true,
    body: {
      injuries,
      other_vehicles: otherVehicles,
      police_attended: police,
      ...(description === '' ? {} : { description }),
      ...(otherParties === '' ? {} : { other_parties: otherParties }),
    },
  };
}

/** The questions of an accident: three yes/no, what happened, and who else was there. */
export function AccidentQuestions(props: {
  answers: Answers;
  problems: Partial<Record<keyof Answers, string>>;
  descriptionRequired: boolean;
  onChange: (answers: Answers) => void;
}) {
  const id = useId();
  const { answers, problems, onChange } = props;
  const text = (key: 'description' | 'other_parties', label: string, hint: string) => (
    <div className="field">
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <span className="hint" id={`${id}-${key}-hint`}>
        {hint}
      </span>
      <textarea
        id={`${id}-${key}`}
        name={key}
        rows={4}
        maxLength={MAX_TEXT}
        value={answers[key]}
        aria-invalid={problems[key] === undefined ? undefined : true}
        aria-describedby={`${id}-${key}-hint${problems[key] === undefined ? '' : ` ${id}-${key}-problem`}`}
        onChange={(event) => {
          onChange({ ...answers, [key]: event.target.value });
        }}
      />
      {problems[key] === undefined ? null : (
        <span id={`${id}-${key}-problem`} className="field-problem">
          {problems[key]}
        </span>
      )}
    </div>
  );
  return (
    <>
      {QUESTIONS.map((question) => (
        <fieldset
          key={question.key}
          className="choice yes-no"
          aria-invalid={problems[question.key] === undefined ? undefined : true}
          aria-describedby={
            problems[question.key] === undefined ? undefined : `${id}-${question.key}-problem`
          }
        >
          <legend>{question.text}</legend>
          {(['yes', 'no'] as const).map((word) => (
            <label key={word}>
              <input
                type="radio"
                name={`${id}-${question.key}`}
                value={word}
                checked={answers[question.key] === (word === 'yes')}
                onChange={() => {
                  onChange({ ...answers, [question.key]: word === 'yes' });
                }}
              />{' '}
              {word === 'yes' ? 'Yes' : 'No'}
            </label>
          ))}
          {problems[question.key] === undefined ? null : (
            <span id={`${id}-${question.key}-problem`} className="field-problem">
              {problems[question.key]}
            </span>
          )}
        </fieldset>
      ))}
      {text(
        'description',
        props.descriptionRequired ? 'What happened' : 'What happened (optional)',
        'Where you were going, what the other vehicles did, the road and the weather.',
      )}
      {text(
        'other_parties',
        'Other people involved (optional)',
        'Other drivers and witnesses: names, phone numbers, vehicle registrations and insurers.',
      )}
    </>
  );
}
