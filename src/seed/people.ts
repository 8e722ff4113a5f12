import { sql, type RawBuilder } from 'kysely';

/**
 * The people, places and vehicles of seeded policies: common UK names (surnames weighted as in life, a
 * few rare ones), real outward codes and their post towns, street names, and current-format
 * registrations. The seed's SQL picks from these lists by each policy's index.
 */

/** One policy in this many has a rare surname (a prime, so it does not line up with the other cycles). */
export const RARE_SURNAME_EVERY = 10_007;

// prettier-ignore
export const FEMALE_FIRST_NAMES = [
  'Olivia', 'Amelia', 'Isla', 'Ava', 'Mia', 'Ivy', 'Lily', 'Isabella', 'Rosie', 'Sophia', 'Grace', 'Freya',
  'Willow', 'Florence', 'Emily', 'Ella', 'Poppy', 'Evie', 'Charlotte', 'Sienna', 'Daisy', 'Evelyn',
  'Sophie', 'Alice', 'Phoebe', 'Matilda', 'Ruby', 'Emilia', 'Harper', 'Sarah', 'Emma', 'Jessica', 'Hannah',
  'Laura', 'Rebecca', 'Rachel', 'Lucy', 'Katie', 'Amy', 'Claire', 'Helen', 'Nicola', 'Karen', 'Susan',
  'Margaret', 'Elizabeth', 'Victoria', 'Jennifer', 'Catherine', 'Joanne', 'Louise', 'Aisha', 'Zara',
  'Niamh', 'Siobhan', 'Megan', 'Bethan', 'Priya', 'Fatima', 'Anna',
];
// prettier-ignore
export const MALE_FIRST_NAMES = [
  'Oliver', 'George', 'Noah', 'Arthur', 'Leo', 'Muhammad', 'Oscar', 'Harry', 'Archie', 'Jack', 'Henry',
  'Charlie', 'Freddie', 'Theodore', 'Thomas', 'Alfie', 'Jacob', 'William', 'Isaac', 'James', 'Joshua',
  'Daniel', 'Samuel', 'Benjamin', 'Edward', 'Joseph', 'Lucas', 'Max', 'Ethan', 'Alexander', 'David',
  'Michael', 'Paul', 'Andrew', 'Mark', 'Richard', 'Christopher', 'Matthew', 'Stephen', 'John', 'Peter',
  'Robert', 'Simon', 'Gareth', 'Rhys', 'Callum', 'Jamie', 'Ryan', 'Liam', 'Connor', 'Owen', 'Dylan', 'Ewan',
  'Aaron', 'Adam', 'Ben', 'Sean', 'Ravi', 'Omar', 'Tom',
];
// prettier-ignore
export const MIDDLE_NAMES = [
  'Rose', 'Mae', 'Grace', 'Jane', 'Louise', 'James', 'John', 'Alexander', 'Edward', 'Lee',
];

/** Most common first: a policy's surname is drawn with weights that fall with the rank. */
// prettier-ignore
export const SURNAMES = [
  'Smith', 'Jones', 'Williams', 'Taylor', 'Brown', 'Davies', 'Evans', 'Wilson', 'Thomas', 'Johnson',
  'Roberts', 'Robinson', 'Thompson', 'Wright', 'Walker', 'White', 'Edwards', 'Hughes', 'Green', 'Hall',
  'Lewis', 'Harris', 'Clarke', 'Patel', 'Jackson', 'Wood', 'Turner', 'Martin', 'Cooper', 'Hill', 'Ward',
  'Morris', 'Moore', 'Clark', 'Lee', 'King', 'Baker', 'Harrison', 'Morgan', 'Allen', 'James', 'Scott',
  'Phillips', 'Watson', 'Davis', 'Parker', 'Price', 'Bennett', 'Young', 'Griffiths', 'Mitchell', 'Kelly',
  'Cook', 'Carter', 'Richardson', 'Bailey', 'Collins', 'Bell', 'Shaw', 'Murphy', 'Miller', 'Cox',
  'Richards', 'Khan', 'Marshall', 'Anderson', 'Simpson', 'Ellis', 'Adams', 'Singh', 'Begum', 'Wilkinson',
  'Foster', 'Chapman', 'Powell', 'Webb', 'Rogers', 'Gray', 'Mason', 'Ali', 'Hunt', 'Hussain', 'Campbell',
  'Matthews', 'Owen', 'Palmer', 'Holmes', 'Mills', 'Barnes', 'Knight', 'Lloyd', 'Butler', 'Russell',
  'Barker', 'Fisher', 'Stevens', 'Jenkins', 'Murray', 'Dixon', 'Harvey', 'Graham', 'Pearson', 'Ahmed',
  'Fletcher', 'Walsh', 'Kaur', 'Gibson', 'Howard', 'Andrews', 'Stewart', 'Elliott', 'Reynolds', 'Saunders',
  'Payne', 'Fox', 'Ford', 'Pearce', 'Day', 'Brooks', 'West', 'Lawrence', 'Cole', 'Atkinson', 'Bradley',
  'Spencer', 'Gill', 'Dawson', 'Ball', 'Burton', "O'Brien", 'Watts', 'Rose', 'Booth', 'Perry', 'Ryan',
  'Grant', 'Wells', 'Armstrong', 'Francis', 'Rees', 'Hayes', 'Hart', 'Hudson', 'Newman', 'Barrett',
  'Webster', 'Hunter', 'Gregory', 'Carr', 'Lowe', 'Page', 'Marsh', 'Riley', 'Dunn', 'Woods', 'Parsons',
  'Berry', 'Stone', 'Reid', 'Holland', 'Hawkins', 'Harding', 'Porter', 'Robertson', 'Newton', 'Oliver',
  'Reed', 'Kennedy', 'Williamson', 'Bird', 'Gardner', 'Shah', 'Dean', 'Lane', 'Cooke', 'Bates', 'Henderson',
  'Parry', 'Burgess', 'Bishop', 'Walton', 'Burns', 'Nicholson', 'Shepherd', 'Ross', 'Cross', 'Long',
  'Freeman', 'Warren', 'Nicholls', 'Hamilton', 'Byrne', 'Sutton', 'McDonald', 'Yates', 'Hodgson', 'Robson',
  'Curtis', 'Hopkins', "O'Connor", 'Harper', 'Coleman', 'Watkins', 'Moss', 'McCarthy', 'Chambers',
  "O'Neill", 'Griffin', 'Sharp', 'Hardy', 'Wheeler', 'Potter', 'Osborne', 'Johnston', 'Gordon', 'Doyle',
  'Wallace', 'Jordan', 'Hutchinson', 'Rowe', 'Burke', 'Pritchard', 'Gilbert',
];
/** Surnames that real people have but few: a search for one finds a handful of policies. */
// prettier-ignore
export const RARE_SURNAMES = [
  'Featherstonehaugh', 'Cholmondeley', 'Marjoribanks', 'Auchinleck', 'Vavasour', 'Ozanne', 'Tremayne',
  'Trelawny', 'Boscawen', 'Inchbald', 'Jolliffe', 'Kettlewell', 'Nankivell', 'Penhaligon', 'Scudamore',
  'Tollemache', 'Urquhart', 'Wykeham', 'Yeoland', 'Zouche',
];

/** Real outward codes and their post towns, across the four nations. */
// prettier-ignore
export const OUTWARD_CODES: ReadonlyArray<readonly [string, string]> = [
  ['SW1A', 'London'], ['EC1A', 'London'], ['WC2N', 'London'], ['W1D', 'London'], ['N1', 'London'],
  ['E1', 'London'], ['SE1', 'London'], ['NW1', 'London'], ['SW19', 'London'], ['E14', 'London'],
  ['M1', 'Manchester'], ['M14', 'Manchester'], ['B1', 'Birmingham'], ['B15', 'Birmingham'],
  ['LS1', 'Leeds'], ['LS6', 'Leeds'], ['L1', 'Liverpool'], ['S1', 'Sheffield'], ['BS1', 'Bristol'],
  ['NE1', 'Newcastle upon Tyne'], ['NG1', 'Nottingham'], ['LE1', 'Leicester'], ['CV1', 'Coventry'],
  ['BN1', 'Brighton'], ['PL1', 'Plymouth'], ['EX1', 'Exeter'], ['YO1', 'York'], ['CB1', 'Cambridge'],
  ['OX1', 'Oxford'], ['RG1', 'Reading'], ['SO14', 'Southampton'], ['PO1', 'Portsmouth'], ['NR1', 'Norwich'],
  ['IP1', 'Ipswich'], ['HU1', 'Hull'], ['ST1', 'Stoke-on-Trent'], ['DE1', 'Derby'],
  ['WV1', 'Wolverhampton'], ['GU1', 'Guildford'], ['CH1', 'Chester'], ['BA1', 'Bath'], ['LA1', 'Lancaster'],
  ['DH1', 'Durham'], ['TR1', 'Truro'], ['MK9', 'Milton Keynes'], ['EH1', 'Edinburgh'], ['EH3', 'Edinburgh'],
  ['G1', 'Glasgow'], ['G12', 'Glasgow'], ['AB10', 'Aberdeen'], ['DD1', 'Dundee'], ['IV1', 'Inverness'],
  ['KY16', 'St Andrews'], ['CF10', 'Cardiff'], ['CF24', 'Cardiff'], ['SA1', 'Swansea'], ['NP20', 'Newport'],
  ['LL57', 'Bangor'], ['SY23', 'Aberystwyth'], ['BT1', 'Belfast'], ['BT7', 'Belfast'],
  ['BT48', 'Londonderry'],
];
// prettier-ignore
export const STREETS = [
  'Station Road', 'High Street', 'Church Lane', 'Victoria Road', 'Green Lane', 'Manor Road', 'Park Avenue',
  'Queen Street', 'Mill Lane', 'The Crescent', 'Kings Road', 'New Road', 'Grange Road', 'School Lane',
  'London Road', 'Springfield Road', 'Chester Road', 'York Road', 'Windsor Road', 'Albert Road',
  'Church Street', 'Main Street', 'Park Road', 'North Street', 'The Green', 'Orchard Close',
  'Highfield Road', 'Stanley Road', 'Richmond Road', 'Alexandra Road', 'George Street', 'Elm Grove',
  'Mount Pleasant', 'Brook Street', 'Meadow Way', 'Beech Avenue', 'Hillside', 'Cedar Close', 'Oak Drive',
  'Willow Close',
];
export const EMAIL_DOMAINS = ['example.com', 'example.org', 'example.net'];
/** Letters of a current-format registration (I, Q and Z are not used). */
const REG_LETTERS = 'ABCDEFGHJKLMNOPRSTUVWXY';
/** The two letters of a postcode's inward part never use C, I, K, M, O or V. */
export const INWARD_LETTERS = 'ABDEFGHJLNPQRSTUWXYZ';

/** Lower-case letters only: the part of a name that goes into an email address or a username. */
export const slug = (name: string): string =>
  name
    .normalize('NFKD')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();

/** Age identifiers of current registrations: March (03–26) and September (51–76) of each year. */
export const REGISTRATION_AGES = [
  ...Array.from({ length: 24 }, (_, k) => String(3 + k).padStart(2, '0')),
  ...Array.from({ length: 26 }, (_, k) => String(51 + k)),
];
/** How many registrations the format gives: 23² area letters × 50 ages × 23³ random letters. */
export const REGISTRATIONS = 23 ** 5 * REGISTRATION_AGES.length;

/** The registration numbered `draws.v` (0 ≤ v < REGISTRATIONS), its digits in mixed radix. */
export function registration(): RawBuilder<string> {
  const letter = (divisor: number) =>
    `substr('${REG_LETTERS}', 1 + ((d.v / ${String(divisor)}) % 23)::int, 1)`;
  return sql.raw(
    [letter(1), letter(23), 'a.value', `' '`, letter(26_450), letter(608_350), letter(13_992_050)].join(
      ' || ',
    ),
  );
}
