/** The reference families: the default families module (`npm start`, tests). */
import { experience } from './experience.ts';
import { profile } from './profile.ts';
import { topicMemory } from './topic-memory.ts';

export default [topicMemory, experience, profile];
