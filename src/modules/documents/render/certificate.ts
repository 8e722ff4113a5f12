/** The certificate of motor insurance, laid out as the Road Traffic Act 1988 and its regulations require. */
import type { CertificateContent } from '../document-content.ts';
import { bullets, facts, heading, paragraph, type Layout } from './layout.ts';
import { londonDateTime, printable } from './text.ts';

/*
 * NOTE: the Road Traffic Act 1988 s.147 makes a policy of no effect until the insurer delivers a
 * certificate "in the prescribed form"; the Motor Vehicles (Third Party Risks) Regulations 1972
 * (reg. 5 and Schedule, Form A) prescribe its items: the registration mark, the policyholder, the effective
 * date and time of commencement, the date of expiry, the persons or classes of persons entitled to drive,
 * the limitations as to use, and the authorised insurer's certification for Great Britain, Northern
 * Ireland, the Isle of Man and the Channel Islands (Guernsey, Jersey and Alderney). The items keep the
 * Form's numbering and wording, which the police and the Motor Insurers' Bureau read by rote.
 */
export const CERTIFICATION_SENTENCE =
  'I/We hereby certify that the policy to which this certificate relates satisfies the requirements of the relevant law applicable in Great Britain, Northern Ireland, the Isle of Man, the Island of Guernsey, the Island of Jersey and the Island of Alderney.';

const DRIVING_PROVISO =
  'Provided that the person driving holds a licence to drive the vehicle or has held and is not disqualified from holding or obtaining such a licence.';

/** Lays out a certificate: the numbered items of Form A, the certification, and the insurer's name. */
export function renderCertificate(l: Layout, c: CertificateContent): void {
  facts(l, [
    ['Certificate number', c.certificateNumber],
    ['Policy number', c.policyReference],
  ]);
  heading(l, '1. Registration mark of vehicle');
  paragraph(l, `${printable(c.registrationMark)} (${printable(c.vehicleDescription)})`, { bold: true });
  heading(l, '2. Name of policyholder');
  paragraph(l, c.policyholderName, { bold: true });
  heading(l, '3. Effective date of the commencement of insurance for the purposes of the relevant law');
  paragraph(l, londonDateTime(c.commencesAt));
  heading(l, '4. Date of expiry of insurance');
  paragraph(l, londonDateTime(c.expiresAt));
  heading(l, '5. Persons or classes of persons entitled to drive');
  bullets(l, c.personsEntitledToDrive);
  paragraph(l, DRIVING_PROVISO);
  heading(l, '6. Limitations as to use');
  bullets(l, c.limitationsAsToUse);
  heading(l, 'Certification');
  paragraph(l, CERTIFICATION_SENTENCE);
  paragraph(l, `${printable(c.insurerName)}, Authorised Insurers`, { bold: true });
  paragraph(
    l,
    'Advice to third parties: nothing contained in this certificate affects your right as a third party to make a claim. For full details of the cover, read the policy and its schedule.',
    { sizePt: 8 },
  );
}
