#!/usr/bin/env python3
"""Builds the small English-Chinese sample in data/sample/.

Every pair comes from the hand-written bilingual grammar in this file: each
template builds an English sentence and its Simplified Chinese translation from
the same choices (subject, verb phrase, time, place, number, ...), so the two
sides agree by construction.  English gets subject-verb agreement, articles and
tense; Chinese gets its own word order (time and place before the verb),
measure words, 了/没 for the past and full-width punctuation.

The output depends only on SEED: `python3 data/make_sample.py` rewrites
data/sample/{train,dev}.{en,zh} byte for byte.  Standard library only.

    python3 data/make_sample.py [--out DIR] [--train N] [--dev N] [--seed S]
    python3 data/make_sample.py --check    # exit 1 if data/sample is stale
"""

import argparse
import os
import random
import sys

SEED = 2024
N_TRAIN = 2000
N_DEV = 200
MIN_WORDS, MAX_WORDS = 3, 12


# ---------------------------------------------------------------- helpers

def cap(s):
    return s[0].upper() + s[1:]


def join(*parts):
    return ' '.join(p for p in parts if p)


def article(noun):
    return ('an ' if noun[0] in 'aeiou' else 'a ') + noun


EN_NUM = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven',
          'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen',
          'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen']
EN_TENS = {20: 'twenty', 30: 'thirty', 40: 'forty', 50: 'fifty',
           60: 'sixty', 70: 'seventy', 80: 'eighty', 90: 'ninety'}
ZH_DIGIT = '零一二三四五六七八九'


def en_num(n):
    if n < 20:
        return EN_NUM[n]
    tens, ones = n - n % 10, n % 10
    return EN_TENS[tens] + ('-' + EN_NUM[ones] if ones else '')


def zh_num(n, measure=False):
    """Chinese numeral; 2 before a measure word is 两."""
    if n == 2 and measure:
        return '两'
    if n < 10:
        return ZH_DIGIT[n]
    tens, ones = n // 10, n % 10
    head = '十' if tens == 1 else ZH_DIGIT[tens] + '十'
    return head + (ZH_DIGIT[ones] if ones else '')


# ---------------------------------------------------------------- verbs

# base: (third person singular, past, -ing)
VERBS = {
    'be': ('is', 'was', 'being'),
    'buy': ('buys', 'bought', 'buying'),
    'clean': ('cleans', 'cleaned', 'cleaning'),
    'come': ('comes', 'came', 'coming'),
    'cook': ('cooks', 'cooked', 'cooking'),
    'dance': ('dances', 'danced', 'dancing'),
    'do': ('does', 'did', 'doing'),
    'draw': ('draws', 'drew', 'drawing'),
    'drink': ('drinks', 'drank', 'drinking'),
    'drive': ('drives', 'drove', 'driving'),
    'eat': ('eats', 'ate', 'eating'),
    'fly': ('flies', 'flew', 'flying'),
    'get': ('gets', 'got', 'getting'),
    'go': ('goes', 'went', 'going'),
    'have': ('has', 'had', 'having'),
    'like': ('likes', 'liked', 'liking'),
    'listen': ('listens', 'listened', 'listening'),
    'live': ('lives', 'lived', 'living'),
    'play': ('plays', 'played', 'playing'),
    'read': ('reads', 'read', 'reading'),
    'ride': ('rides', 'rode', 'riding'),
    'run': ('runs', 'ran', 'running'),
    'sing': ('sings', 'sang', 'singing'),
    'speak': ('speaks', 'spoke', 'speaking'),
    'study': ('studies', 'studied', 'studying'),
    'swim': ('swims', 'swam', 'swimming'),
    'take': ('takes', 'took', 'taking'),
    'use': ('uses', 'used', 'using'),
    'wash': ('washes', 'washed', 'washing'),
    'want': ('wants', 'wanted', 'wanting'),
    'watch': ('watches', 'watched', 'watching'),
    'work': ('works', 'worked', 'working'),
    'write': ('writes', 'wrote', 'writing'),
}


def conj(verb, form):
    if form == 'base':
        return verb
    return VERBS[verb][{'s': 0, 'past': 1, 'ing': 2}[form]]


# ---------------------------------------------------------------- subjects

class Subj(object):
    """A subject noun phrase.

    person 1/2/3, plural, possessive determiner (None if the gender is not
    known), the pronoun that refers back to it, kind: 'adult', 'child', 'any'.
    """

    def __init__(self, en, zh, person=3, plural=False, poss=None, pron=None,
                 kind='any'):
        self.en, self.zh = en, zh
        self.person, self.plural = person, plural
        self.poss, self.pron, self.kind = poss, pron, kind

    @property
    def sg3(self):
        return self.person == 3 and not self.plural

    def be(self, tense='present'):
        if tense == 'past':
            return 'was' if (self.sg3 or self.en == 'I') else 'were'
        if self.en == 'I':
            return 'am'
        return 'is' if self.sg3 else 'are'

    def do(self):
        return 'does' if self.sg3 else 'do'

    def v(self, verb):
        return conj(verb, 's' if self.sg3 else 'base')


def P(en, zh, person, plural, poss):
    return Subj(en, zh, person, plural, poss, en)


PRON = {
    'I': P('I', '我', 1, False, 'my'),
    'you': P('you', '你', 2, False, 'your'),
    'he': P('he', '他', 3, False, 'his'),
    'she': P('she', '她', 3, False, 'her'),
    'we': P('we', '我们', 1, True, 'our'),
    'they': P('they', '他们', 3, True, 'their'),
}

# (English, Chinese, pronoun)
NAMES = [('Tom', '汤姆', 'he'), ('Mary', '玛丽', 'she'), ('Jack', '杰克', 'he'),
         ('Lucy', '露西', 'she'), ('Li Ming', '李明', 'he'),
         ('Anna', '安娜', 'she'), ('David', '大卫', 'he'),
         ('Lily', '莉莉', 'she')]


def name_subj(en, zh, pron):
    return Subj(en, zh, 3, False, PRON[pron].poss, pron)


NAME_SUBJ = [name_subj(*n) for n in NAMES]


def fam(en, zh, pron, kind, plural=False):
    poss = PRON[pron].poss if pron else None
    return Subj(en, zh, 3, plural, poss, pron, kind)


MY_FAMILY = [
    fam('my father', '我爸爸', 'he', 'adult'),
    fam('my mother', '我妈妈', 'she', 'adult'),
    fam('my brother', '我哥哥', 'he', 'any'),
    fam('my sister', '我姐姐', 'she', 'any'),
    fam('my grandfather', '我爷爷', 'he', 'adult'),
    fam('my grandmother', '我奶奶', 'she', 'adult'),
    fam('my friend', '我的朋友', None, 'any'),
    fam('his father', '他爸爸', 'he', 'adult'),
    fam('her mother', '她妈妈', 'she', 'adult'),
    fam('our teacher', '我们老师', None, 'adult'),
    fam('my parents', '我父母', 'they', 'adult', plural=True),
    fam('the children', '孩子们', 'they', 'child', plural=True),
    fam('the students', '学生们', 'they', 'any', plural=True),
    fam('Tom and Mary', '汤姆和玛丽', 'they', 'any', plural=True),
]

YOUR_FAMILY = [
    fam('your father', '你爸爸', 'he', 'adult'),
    fam('your mother', '你妈妈', 'she', 'adult'),
    fam('your brother', '你哥哥', 'he', 'any'),
    fam('your sister', '你姐姐', 'she', 'any'),
    fam('your friend', '你的朋友', None, 'any'),
    fam('your parents', '你父母', 'they', 'adult', plural=True),
]

# subjects of statements and of questions (questions about "I"/"we" and
# "my ..." are left out: they read oddly as questions)
STATE_SUBJ = ([PRON[p] for p in ('I', 'he', 'she', 'we', 'they')] +
              NAME_SUBJ + MY_FAMILY)
QUEST_SUBJ = ([PRON[p] for p in ('you', 'he', 'she', 'they')] + NAME_SUBJ +
              YOUR_FAMILY + [s for s in MY_FAMILY if not s.en.startswith('my ')])
STATE_W = [3, 2, 2, 2, 2] + [1.2] * len(NAME_SUBJ) + [1] * len(MY_FAMILY)
QUEST_W = [4, 1.5, 1.5, 1.5] + [1] * (len(QUEST_SUBJ) - 4)


def pick_subj(r, pool='state', kind=None, poss=False, pron=False,
              singular=False, named=False, exclude=()):
    subs, ws = (STATE_SUBJ, STATE_W) if pool == 'state' else (QUEST_SUBJ,
                                                                QUEST_W)
    cand = []
    for s, w in zip(subs, ws):
        if kind == 'adult' and s.kind == 'child':
            continue
        if kind == 'kid' and s.kind == 'adult':
            continue
        if kind == 'grown' and s.kind != 'adult' and s.en not in (
                'I', 'you', 'he', 'she', 'we', 'they'):
            continue
        if poss and s.poss is None:
            continue
        if pron and s.pron is None:
            continue
        if singular and s.plural:
            continue
        if s.en in exclude:
            continue
        if named and s.en in PRON:
            continue
        cand.append((s, w))
    return r.choices([c[0] for c in cand], [c[1] for c in cand])[0]


# ---------------------------------------------------------------- times

HABIT_TIMES = [('every day', '每天都'), ('every morning', '每天早上都'),
               ('every evening', '每天晚上都'), ('every Sunday', '每个星期天都'),
               ('on weekends', '周末'), ('in the morning', '早上'),
               ('in the afternoon', '下午'), ('in the evening', '晚上')]
ADVERBS = [('often', '经常'), ('usually', '通常'), ('sometimes', '有时候')]
NEG_HABIT_TIMES = [('on weekends', '周末'), ('in the morning', '早上'),
                   ('in the evening', '晚上'), ('on Sundays', '星期天')]
PAST_TIMES = [('yesterday', '昨天'), ('last night', '昨天晚上'),
              ('yesterday morning', '昨天早上'),
              ('yesterday afternoon', '昨天下午'), ('last week', '上个星期'),
              ('last Sunday', '上个星期天'), ('this morning', '今天早上')]
FUT_TIMES = [('tomorrow', '明天'), ('tonight', '今天晚上'),
             ('tomorrow morning', '明天早上'),
             ('tomorrow afternoon', '明天下午'), ('next week', '下个星期'),
             ('this weekend', '这个周末'), ('next Sunday', '下个星期天')]
WANT_TIMES = [('today', '今天'), ('tonight', '今天晚上'), ('tomorrow', '明天'),
              ('this weekend', '这个周末')]

# ---------------------------------------------------------------- places

# where an activity happens: English, Chinese (with 在), bare Chinese noun
PLACES = {
    'home': ('at home', '在家', '家'),
    'school': ('at school', '在学校', '学校'),
    'library': ('in the library', '在图书馆', '图书馆'),
    'park': ('in the park', '在公园', '公园'),
    'kitchen': ('in the kitchen', '在厨房', '厨房'),
    'classroom': ('in the classroom', '在教室', '教室'),
    'hospital': ('at the hospital', '在医院', '医院'),
    'beijing': ('in Beijing', '在北京', '北京'),
    'shanghai': ('in Shanghai', '在上海', '上海'),
}

# ---------------------------------------------------------------- verb phrases

SPEC_CTX = ('past', 'pastneg', 'pastq', 'prog', 'progq', 'fut', 'futneg',
            'futq', 'want', 'wantneg', 'wantq', 'lets')
# drinks and food: the counted object ("a cup of tea") only where it is natural
FOOD_GEN = ('pastneg', 'pastq', 'prog', 'progq', 'fut', 'futneg', 'futq',
            'wantneg', 'lets')


class VP(object):
    """A verb with its object.

    gen: object in habits, likes and abilities ("read books");
    spec: object of one event ("read a book"), used in the contexts of SPEC_CTX
    not listed in gen_in.  zh: Chinese verb phrase; zh_spec: Chinese for the
    counted object (want/will); zh_past: Chinese past statement (default zh+了).
    places: keys of PLACES where it is done.  tags: skill (after can), like
    (after like), lets (after let's), adult / kid (who does it), noprog (no
    -ing form), nofut, nohabit, only (only after can), noadv (no often/usually; a
    habit says where), food (plural subjects take the uncounted object).
    bad: time phrases that do not fit (substrings of the English time).
    """

    def __init__(self, verb, gen, zh, spec=None, zh_spec=None, zh_past=None,
                 places=(), tags='', gen_in=(), bad=(), zh_lets=None):
        self.verb, self.gen, self.zh = verb, gen, zh
        self.spec = spec if spec is not None else gen
        self.zh_spec, self.zh_past = zh_spec, zh_past
        self.places, self.tags = places, tags.split()
        self.gen_in, self.bad, self.zh_lets = gen_in, bad, zh_lets

    def has(self, tag):
        return tag in self.tags

    def uses_spec(self, ctx, plural=False):
        if plural and self.has('food'):     # "they drank tea", not "a cup"
            return False
        return ctx in SPEC_CTX and ctx not in self.gen_in

    def en(self, form, ctx, poss=None, plural=False):
        obj = self.spec if self.uses_spec(ctx, plural) else self.gen
        if '{poss}' in obj:
            obj = obj.replace('{poss}', poss)
        return join(conj(self.verb, form), obj)

    def zh_for(self, ctx, plural=False):
        spec = self.uses_spec(ctx, plural) and self.spec != self.gen
        if ctx == 'past':
            return self.zh_past if (spec and self.zh_past) else self.zh + '了'
        if ctx in ('fut', 'want', 'wantq') and spec and self.zh_spec:
            return self.zh_spec
        if ctx == 'lets' and self.zh_lets:
            return self.zh_lets
        return self.zh

    def time_ok(self, time_en):
        return not any(b in time_en for b in self.bad)


ACTIVITIES = [
    VP('play', 'football', '踢足球', places=('park', 'school'),
       tags='skill like lets', bad=('night',)),
    VP('play', 'basketball', '打篮球', places=('park', 'school'),
       tags='skill like lets', bad=('night',)),
    VP('play', 'the piano', '弹钢琴', places=('home',), tags='skill like'),
    VP('play', 'the guitar', '弹吉他', places=('home',), tags='skill like'),
    VP('play', 'chess', '下棋', places=('home', 'park'),
       tags='skill like lets'),
    VP('play', 'computer games', '玩电脑游戏', places=('home',), tags='like'),
    VP('watch', 'TV', '看电视', places=('home',), tags='like lets',
       bad=('week',)),
    VP('watch', 'movies', '看电影', spec='a movie', zh_past='看了一部电影',
       tags='like lets'),
    VP('read', 'books', '看书', spec='a book', zh_past='看了一本书',
       places=('home', 'library', 'park'), tags='like'),
    VP('read', 'the newspaper', '看报纸', places=('home',),
       tags='like adult', bad=('week',)),
    VP('listen', 'to music', '听音乐', places=('home',), tags='like lets'),
    VP('drink', 'tea', '喝茶', spec='a cup of tea', zh_spec='喝一杯茶',
       zh_past='喝了一杯茶', places=('home',), tags='like nofut food',
       gen_in=FOOD_GEN, bad=('week',)),
    VP('drink', 'coffee', '喝咖啡', spec='a cup of coffee',
       zh_spec='喝一杯咖啡', zh_past='喝了一杯咖啡', tags='like adult nofut food',
       gen_in=FOOD_GEN, bad=('week',)),
    VP('drink', 'milk', '喝牛奶', spec='a glass of milk', zh_spec='喝一杯牛奶',
       zh_past='喝了一杯牛奶', tags='like nofut food', gen_in=FOOD_GEN,
       bad=('week',)),
    VP('eat', 'apples', '吃苹果', spec='an apple', zh_spec='吃一个苹果',
       zh_past='吃了一个苹果', tags='like nofut food',
       gen_in=('pastneg', 'wantneg'), bad=('week',)),
    VP('eat', 'noodles', '吃面条', spec='a bowl of noodles',
       zh_spec='吃一碗面条', zh_past='吃了一碗面条', tags='like nofut food',
       gen_in=FOOD_GEN, bad=('week',)),
    VP('eat', 'dumplings', '吃饺子', places=('home',), tags='like lets'),
    VP('have', 'breakfast', '吃早饭', places=('home',), tags='noadv nofut',
       bad=('evening', 'night', 'afternoon', 'week')),
    VP('have', 'lunch', '吃午饭', places=('home', 'school'), tags='noadv nofut',
       bad=('morning', 'afternoon', 'evening', 'night', 'week')),
    VP('have', 'dinner', '吃晚饭', places=('home',), tags='noadv nofut',
       bad=('morning', 'afternoon', 'week')),
    VP('cook', 'dinner', '做晚饭', places=('home',), tags='adult',
       bad=('morning', 'afternoon', 'week')),
    VP('do', '{poss} homework', '做作业', places=('home', 'library', 'school'),
       tags='kid lets noadv', bad=('week',)),
    VP('clean', 'the room', '打扫房间', tags='lets'),
    VP('wash', 'the dishes', '洗碗', places=('kitchen',), bad=('week',)),
    VP('write', 'letters', '写信', spec='a letter', zh_spec='写一封信',
       zh_past='写了一封信', places=('home',)),
    VP('study', 'Chinese', '学中文', places=('school', 'home'), tags='like'),
    VP('study', 'English', '学英语', places=('school', 'home'), tags='like'),
    VP('study', '', '学习', places=('library', 'home', 'school'), tags='noadv'),
    VP('swim', '', '游泳', tags='skill like', bad=('night',)),
    VP('go', 'swimming', '去游泳', tags='lets noprog', bad=('night',)),
    VP('go', 'fishing', '去钓鱼', tags='like lets noprog', bad=('night',)),
    VP('run', '', '跑步', places=('park',), tags='like nofut'),
    VP('take', 'a walk', '散步', places=('park',), tags='lets',
       zh_lets='去散步'),
    VP('ride', 'a bike', '骑自行车', places=('park',), tags='skill like'),
    VP('sing', '', '唱歌', tags='skill like lets nofut nohabit'),
    VP('dance', '', '跳舞', tags='skill like lets nofut nohabit'),
    VP('draw', 'pictures', '画画', spec='a picture', zh_spec='画一幅画',
       zh_past='画了一幅画', places=('home',), tags='like'),
    VP('fly', 'kites', '放风筝', spec='a kite', places=('park',),
       tags='like lets', bad=('night', 'evening')),
    # only after "can"
    VP('drive', '', '开车', tags='skill only adult'),
    VP('cook', '', '做饭', tags='skill only'),
    VP('speak', 'Chinese', '说中文', tags='skill only'),
    VP('speak', 'English', '说英语', tags='skill only'),
    VP('speak', 'French', '说法语', tags='skill only'),
    VP('speak', 'Japanese', '说日语', tags='skill only'),
    VP('use', 'chopsticks', '用筷子', tags='skill only'),
    VP('write', 'Chinese characters', '写汉字', tags='skill only'),
]


def pick_vp(r, need=None, without=()):
    cand = [v for v in ACTIVITIES
            if (need is None or v.has(need)) and
            not any(v.has(t) for t in without)]
    return r.choice(cand)


def subj_for(r, vp, pool='state', **kw):
    kind = 'adult' if vp.has('adult') else ('kid' if vp.has('kid') else None)
    return pick_subj(r, pool, kind=kind, poss='{poss}' in vp.gen + vp.spec,
                     **kw)


def maybe_place(r, vp, p=0.45):
    if vp.places and r.random() < p:
        return PLACES[r.choice(vp.places)]
    return ('', '', '')


def pick_time(r, times, vp):
    return r.choice([t for t in times if vp.time_ok(t[0])])


# ---------------------------------------------------------------- templates
# Each returns (english, chinese).

def t_habit(r):
    vp = pick_vp(r, without=('only', 'nohabit'))
    s = subj_for(r, vp)
    # meals: "has lunch every day" says little; "has lunch at school" more
    pl_en, pl_zh, _ = maybe_place(r, vp, 1.0 if vp.has('noadv') else 0.45)
    adv_en = adv_zh = t_en = t_zh = ''
    if r.random() < 0.3 and not vp.has('noadv'):
        adv_en, adv_zh = r.choice(ADVERBS)
    elif not pl_en or r.random() < 0.7:
        t_en, t_zh = pick_time(r, HABIT_TIMES, vp)
    en = join(s.en, adv_en, vp.en('s' if s.sg3 else 'base', 'habit', s.poss),
              pl_en, t_en)
    return cap(en) + '.', s.zh + t_zh + adv_zh + pl_zh + vp.zh + '。'


def t_habit_neg(r):
    vp = pick_vp(r, without=('only', 'nohabit'))
    s = subj_for(r, vp)
    t_en, t_zh = ('', '')
    if r.random() < 0.5:
        t_en, t_zh = pick_time(r, NEG_HABIT_TIMES, vp)
    en = join(s.en, s.do(), 'not', vp.en('base', 'habit', s.poss), t_en)
    return cap(en) + '.', s.zh + t_zh + '不' + vp.zh + '。'


def t_habit_q(r):
    vp = pick_vp(r, without=('only', 'nohabit'))
    s = subj_for(r, vp, 'quest')
    pl_en, pl_zh, _ = maybe_place(r, vp, 1.0 if vp.has('noadv') else 0.3)
    adv_en = adv_zh = t_en = t_zh = ''
    x = r.random()
    if x < 0.3 and not vp.has('noadv'):
        adv_en, adv_zh = r.choice(ADVERBS[:2])
    elif x < 0.8 or not pl_en:
        t_en, t_zh = pick_time(r, HABIT_TIMES, vp)
    en = join(s.do(), s.en, adv_en, vp.en('base', 'habit', s.poss), pl_en,
              t_en)
    return cap(en) + '?', s.zh + t_zh + adv_zh + pl_zh + vp.zh + '吗？'


def t_past(r):
    vp = pick_vp(r, without=('only',))
    s = subj_for(r, vp)
    pl_en, pl_zh, _ = maybe_place(r, vp, 0.35)
    t_en, t_zh = pick_time(r, PAST_TIMES, vp)
    en = join(s.en, vp.en('past', 'past', s.poss, s.plural), pl_en, t_en)
    return (cap(en) + '.',
            s.zh + t_zh + pl_zh + vp.zh_for('past', s.plural) + '。')


def t_past_neg(r):
    vp = pick_vp(r, without=('only',))
    s = subj_for(r, vp)
    t_en, t_zh = pick_time(r, PAST_TIMES, vp)
    en = join(s.en, 'did not', vp.en('base', 'pastneg', s.poss), t_en)
    return cap(en) + '.', s.zh + t_zh + '没' + vp.zh + '。'


def t_past_q(r):
    vp = pick_vp(r, without=('only',))
    s = subj_for(r, vp, 'quest')
    pl_en, pl_zh, _ = maybe_place(r, vp, 0.25)
    t_en, t_zh = pick_time(r, PAST_TIMES, vp)
    en = join('did', s.en, vp.en('base', 'pastq', s.poss), pl_en, t_en)
    return cap(en) + '?', s.zh + t_zh + pl_zh + vp.zh + '了吗？'


def t_prog(r):
    vp = pick_vp(r, without=('only', 'noprog'))
    s = subj_for(r, vp)
    pl_en, pl_zh, _ = maybe_place(r, vp, 0.4)
    en = join(s.en, s.be(), vp.en('ing', 'prog', s.poss), pl_en, 'now')
    zh = s.zh + '现在' + (pl_zh if pl_zh else '正在') + vp.zh + '。'
    return cap(en) + '.', zh


def t_prog_q(r):
    vp = pick_vp(r, without=('only', 'noprog'))
    s = subj_for(r, vp, 'quest')
    en = join(s.be(), s.en, vp.en('ing', 'progq', s.poss), 'now')
    return cap(en) + '?', s.zh + '现在在' + vp.zh + '吗？'


def t_fut(r):
    vp = pick_vp(r, without=('only', 'nofut'))
    s = subj_for(r, vp)
    pl_en, pl_zh, _ = maybe_place(r, vp, 0.35)
    t_en, t_zh = pick_time(r, FUT_TIMES, vp)
    en = join(s.en, 'will', vp.en('base', 'fut', s.poss), pl_en, t_en)
    return cap(en) + '.', s.zh + t_zh + '会' + pl_zh + vp.zh_for('fut') + '。'


def t_fut_neg(r):
    vp = pick_vp(r, without=('only', 'nofut'))
    s = subj_for(r, vp)
    t_en, t_zh = pick_time(r, FUT_TIMES, vp)
    en = join(s.en, 'will not', vp.en('base', 'futneg', s.poss), t_en)
    return cap(en) + '.', s.zh + t_zh + '不会' + vp.zh + '。'


def t_fut_q(r):
    vp = pick_vp(r, without=('only', 'nofut'))
    s = subj_for(r, vp, 'quest')
    t_en, t_zh = pick_time(r, FUT_TIMES, vp)
    en = join('will', s.en, vp.en('base', 'futq', s.poss), t_en)
    return cap(en) + '?', s.zh + t_zh + '会' + vp.zh + '吗？'


# things one likes: English, Chinese, group ("but" contrasts two of a group);
# coffee is not for children
LIKE_NOUNS = [
    ('apples', '苹果', 'food'), ('bananas', '香蕉', 'food'),
    ('oranges', '橙子', 'food'), ('noodles', '面条', 'food'),
    ('dumplings', '饺子', 'food'), ('fish', '鱼', 'food'),
    ('rice', '米饭', 'food'), ('ice cream', '冰淇淋', 'food'),
    ('Chinese food', '中国菜', 'food'), ('tea', '茶', 'drink'),
    ('coffee', '咖啡', 'drink'), ('milk', '牛奶', 'drink'),
    ('cats', '猫', 'pet'), ('dogs', '狗', 'pet'), ('summer', '夏天', 'season'),
    ('winter', '冬天', 'season'), ('spring', '春天', 'season'),
    ('autumn', '秋天', 'season'), ('Beijing', '北京', 'city'),
    ('Shanghai', '上海', 'city'), ('music', '音乐', ''), ('flowers', '花', ''),
    ('football', '足球', ''), ('animals', '动物', ''),
    ('this song', '这首歌', ''), ('this book', '这本书', ''),
]


def like_nouns(s):
    return [n for n in LIKE_NOUNS if not (n[0] == 'coffee' and
                                          s.kind == 'child')]


def like_obj(r, s, ctx='like', exclude=()):
    """An object of like: a noun or an activity (gerund or infinitive)."""
    if r.random() < 0.55:
        n = r.choice([n for n in like_nouns(s) if n[0] not in exclude])
        return n[0], n[1]
    while True:
        vp = pick_vp(r, need='like')
        if (vp.has('adult') and s.kind == 'child') or vp.gen in exclude:
            continue
        if vp.has('kid') and s.kind == 'adult':
            continue
        break
    if r.random() < 0.5:
        return vp.en('ing', 'like', s.poss), vp.zh
    return 'to ' + vp.en('base', 'like', s.poss), vp.zh


def t_like(r):
    s = pick_subj(r)
    o_en, o_zh = like_obj(r, s)
    if r.random() < 0.2:
        return (cap(join(s.en, s.v('like'), o_en, 'very much')) + '.',
                s.zh + '非常喜欢' + o_zh + '。')
    return cap(join(s.en, s.v('like'), o_en)) + '.', s.zh + '喜欢' + o_zh + '。'


def t_like_neg(r):
    s = pick_subj(r)
    o_en, o_zh = like_obj(r, s)
    return (cap(join(s.en, s.do(), 'not like', o_en)) + '.',
            s.zh + '不喜欢' + o_zh + '。')


def t_like_q(r):
    s = pick_subj(r, 'quest')
    o_en, o_zh = like_obj(r, s)
    return cap(join(s.do(), s.en, 'like', o_en)) + '?', s.zh + '喜欢' + o_zh + '吗？'


def t_want(r):
    vp = pick_vp(r, without=('only',))
    s = subj_for(r, vp)
    t_en, t_zh = ('', '')
    if r.random() < 0.3:
        t_en, t_zh = pick_time(r, WANT_TIMES, vp)
    en = join(s.en, s.v('want'), 'to', vp.en('base', 'want', s.poss, s.plural),
              t_en)
    return cap(en) + '.', s.zh + t_zh + '想' + vp.zh_for('want', s.plural) + '。'


def t_want_neg(r):
    vp = pick_vp(r, without=('only',))
    s = subj_for(r, vp)
    t_en, t_zh = ('', '')
    if r.random() < 0.3:
        t_en, t_zh = pick_time(r, WANT_TIMES, vp)
    en = join(s.en, s.do(), 'not want to', vp.en('base', 'wantneg', s.poss),
              t_en)
    return cap(en) + '.', s.zh + t_zh + '不想' + vp.zh + '。'


def t_want_q(r):
    vp = pick_vp(r, without=('only',))
    s = subj_for(r, vp, 'quest')
    en = join(s.do(), s.en, 'want to', vp.en('base', 'wantq', s.poss, s.plural))
    return cap(en) + '?', s.zh + '想' + vp.zh_for('wantq', s.plural) + '吗？'


def t_can(r):
    vp = pick_vp(r, need='skill')
    s = subj_for(r, vp)
    x = r.random()
    if x < 0.55:
        return (cap(join(s.en, 'can', vp.en('base', 'can'))) + '.',
                s.zh + '会' + vp.zh + '。')
    if x < 0.8:
        return (cap(join(s.en, 'cannot', vp.en('base', 'can'))) + '.',
                s.zh + '不会' + vp.zh + '。')
    s = subj_for(r, vp, 'quest')
    return (cap(join('can', s.en, vp.en('base', 'can'))) + '?',
            s.zh + '会' + vp.zh + '吗？')


def t_lets(r):
    if r.random() < 0.3:
        d = r.choice([d for d in DESTS if not d.city])
        return "Let's go to " + d.en + '!', '我们去' + d.zh + '吧！'
    vp = pick_vp(r, need='lets')
    pl = [p for p in vp.places if p in ('park', 'school', 'library')]
    if pl and r.random() < 0.4:
        p = PLACES[r.choice(pl)]
        return ("Let's " + join(vp.en('base', 'lets', 'our'), p[0]) + '!',
                '我们去' + p[2] + vp.zh + '吧！')
    return "Let's " + vp.en('base', 'lets', 'our') + '!', '我们' + vp.zh_for(
        'lets') + '吧！'


# ---- going places

class Dest(object):
    """A place one goes to; times: habits that fit; bad: as for VP."""

    def __init__(self, en, zh, times=(), advs=True, city=False,
                 bad=('night',)):
        self.en, self.zh = en, zh
        self.times, self.advs, self.city, self.bad = times, advs, city, bad

    def time(self, r, times):
        return r.choice([t for t in times
                         if not any(b in t[0] for b in self.bad)])


EVERY_DAY = ('every day', '每天都')
EVERY_MORNING = ('every morning', '每天早上都')
EVERY_EVENING = ('every evening', '每天晚上都')
ON_WEEKENDS = ('on weekends', '周末')
EVERY_SUNDAY = ('every Sunday', '每个星期天都')
EVERY_SUMMER = ('every summer', '每年夏天都')
EVERY_YEAR = ('every year', '每年都')

DESTS = [
    Dest('school', '学校', (EVERY_DAY, EVERY_MORNING), advs=False,
         bad=('night', 'Sunday', 'weekend', 'week')),
    Dest('the park', '公园', (EVERY_DAY, EVERY_MORNING, EVERY_EVENING,
                             ON_WEEKENDS, EVERY_SUNDAY), bad=()),
    Dest('the library', '图书馆', (EVERY_DAY, ON_WEEKENDS, EVERY_SUNDAY)),
    Dest('the supermarket', '超市', (ON_WEEKENDS, EVERY_SUNDAY)),
    Dest('the zoo', '动物园', (ON_WEEKENDS,)),
    Dest('the hospital', '医院', advs=False),
    Dest('the cinema', '电影院', (ON_WEEKENDS,), bad=()),
    Dest('the bank', '银行', advs=False),
    Dest('the museum', '博物馆', (ON_WEEKENDS,)),
    Dest('the beach', '海边', (EVERY_SUMMER, ON_WEEKENDS)),
    Dest('Beijing', '北京', (EVERY_SUMMER, EVERY_YEAR), city=True),
    Dest('Shanghai', '上海', (EVERY_SUMMER, EVERY_YEAR), city=True),
    Dest('London', '伦敦', (EVERY_YEAR,), city=True),
]

LOCAL_TRANSPORT = [('by bus', '坐公共汽车'), ('by subway', '坐地铁'),
                   ('by bike', '骑自行车'), ('by taxi', '坐出租车')]
CITY_TRANSPORT = [('by train', '坐火车'), ('by plane', '坐飞机')]


def transport(r, d, p=0.3):
    if r.random() < p:
        if d.en == 'London':
            return CITY_TRANSPORT[1]
        return r.choice(CITY_TRANSPORT if d.city else LOCAL_TRANSPORT)
    return ('', '')


def t_go(r):
    d = r.choice(DESTS)
    x = r.random()
    if x < 0.3 and (d.times or d.advs):
        s = pick_subj(r)
        tr_en, tr_zh = transport(r, d)
        adv_en = adv_zh = t_en = t_zh = ''
        if d.advs and (not d.times or r.random() < 0.4):
            adv_en, adv_zh = r.choice(ADVERBS)
        else:
            t_en, t_zh = r.choice(d.times)
        en = join(s.en, adv_en, s.v('go'), 'to', d.en, tr_en, t_en)
        return cap(en) + '.', s.zh + t_zh + adv_zh + tr_zh + '去' + d.zh + '。'
    if x < 0.55:
        s = pick_subj(r)
        tr_en, tr_zh = transport(r, d)
        t_en, t_zh = d.time(r, PAST_TIMES[:2] + PAST_TIMES[4:])
        en = join(s.en, 'went to', d.en, tr_en, t_en)
        return cap(en) + '.', s.zh + t_zh + tr_zh + '去了' + d.zh + '。'
    if x < 0.65:
        s = pick_subj(r)
        t_en, t_zh = d.time(r, PAST_TIMES[:2] + PAST_TIMES[4:])
        en = join(s.en, 'did not go to', d.en, t_en)
        return cap(en) + '.', s.zh + t_zh + '没去' + d.zh + '。'
    if x < 0.75:
        s = pick_subj(r, 'quest')
        t_en, t_zh = d.time(r, PAST_TIMES[:2] + PAST_TIMES[4:])
        en = join('did', s.en, 'go to', d.en, t_en)
        return cap(en) + '?', s.zh + t_zh + '去' + d.zh + '了吗？'
    if x < 0.9:
        s = pick_subj(r)
        tr_en, tr_zh = transport(r, d)
        t_en, t_zh = d.time(r, FUT_TIMES[:2] + FUT_TIMES[4:])
        en = join(s.en, 'will go to', d.en, tr_en, t_en)
        return cap(en) + '.', s.zh + t_zh + '会' + tr_zh + '去' + d.zh + '。'
    s = pick_subj(r, 'quest')
    t_en, t_zh = d.time(r, FUT_TIMES[:2] + FUT_TIMES[4:])
    en = join('will', s.en, 'go to', d.en, t_en)
    return cap(en) + '?', s.zh + t_zh + '会去' + d.zh + '吗？'


def t_go_want(r):
    d = r.choice(DESTS)
    t_en, t_zh = ('', '')
    if r.random() < 0.3:
        t_en, t_zh = d.time(r, WANT_TIMES)
    x = r.random()
    if x < 0.5:
        s = pick_subj(r)
        en = join(s.en, s.v('want'), 'to go to', d.en, t_en)
        return cap(en) + '.', s.zh + t_zh + '想去' + d.zh + '。'
    if x < 0.75:
        s = pick_subj(r)
        en = join(s.en, s.do(), 'not want to go to', d.en, t_en)
        return cap(en) + '.', s.zh + t_zh + '不想去' + d.zh + '。'
    s = pick_subj(r, 'quest')
    en = join(s.do(), s.en, 'want to go to', d.en, t_en)
    return cap(en) + '?', s.zh + t_zh + '想去' + d.zh + '吗？'


def t_go_how(r):
    d = r.choice(DESTS)
    s = pick_subj(r, 'quest')
    if r.random() < 0.5 and EVERY_DAY in d.times:
        return (cap(join('how', s.do(), s.en, 'go to', d.en)) + '?',
                s.zh + '怎么去' + d.zh + '？')
    if r.random() < 0.5 and d.en != 'school':
        return (cap(join('when', 'will', s.en, 'go to', d.en)) + '?',
                s.zh + '什么时候去' + d.zh + '？')
    s = pick_subj(r)
    tr_en, tr_zh = transport(r, d, 1.0)
    if r.random() < 0.5 and d.en == 'school':
        en = join(s.en, s.v('go'), 'to', d.en, tr_en, 'every day')
        return cap(en) + '.', s.zh + '每天都' + tr_zh + '去' + d.zh + '。'
    t_en, t_zh = d.time(r, PAST_TIMES[:2] + PAST_TIMES[4:])
    en = join(s.en, 'went to', d.en, tr_en, t_en)
    return cap(en) + '.', s.zh + t_zh + tr_zh + '去了' + d.zh + '。'


# ---- where people are

BE_PLACES = ['home', 'school', 'library', 'park', 'kitchen', 'classroom',
             'hospital', 'beijing', 'shanghai']


def t_be_at(r):
    p = PLACES[r.choice(BE_PLACES)]
    x = r.random()
    if x < 0.35:
        s = pick_subj(r)
        t_en, t_zh = r.choice([('', ''), ('now', '现在'), ('today', '今天')])
        return cap(join(s.en, s.be(), p[0], t_en)) + '.', s.zh + t_zh + p[1] + '。'
    if x < 0.5:
        s = pick_subj(r)
        t_en, t_zh = r.choice([('yesterday', '昨天'), ('last week', '上个星期'),
                               ('last night', '昨天晚上')])
        return (cap(join(s.en, s.be('past'), p[0], t_en)) + '.',
                s.zh + t_zh + p[1] + '。')
    if x < 0.6:
        s = pick_subj(r)
        t_en, t_zh = r.choice([('tomorrow', '明天'), ('next week', '下个星期'),
                               ('tonight', '今天晚上')])
        return cap(join(s.en, 'will be', p[0], t_en)) + '.', s.zh + t_zh + '会' + p[1] + '。'
    if x < 0.75:
        s = pick_subj(r)
        t_en, t_zh = r.choice([('', ''), ('now', '现在'), ('today', '今天')])
        return (cap(join(s.en, s.be(), 'not', p[0], t_en)) + '.',
                s.zh + t_zh + '不' + p[1] + '。')
    if x < 0.9:
        s = pick_subj(r, 'quest')
        t_en, t_zh = r.choice([('', ''), ('now', '现在'), ('today', '今天')])
        return (cap(join(s.be(), s.en, p[0], t_en)) + '?',
                s.zh + t_zh + p[1] + '吗？')
    s = pick_subj(r, 'quest')
    if r.random() < 0.6:
        t_en, t_zh = r.choice([('', ''), ('now', '现在')])
        return cap(join('where', s.be(), s.en, t_en)) + '?', s.zh + t_zh + '在哪儿？'
    t_en, t_zh = r.choice([('yesterday', '昨天'), ('last week', '上个星期')])
    return (cap(join('where', s.be('past'), s.en, t_en)) + '?',
            s.zh + t_zh + '在哪儿？')


CITIES = [('Beijing', '北京'), ('Shanghai', '上海'), ('London', '伦敦'),
          ('New York', '纽约'), ('Guangzhou', '广州')]


def t_live(r):
    c = r.choice(CITIES)
    x = r.random()
    if x < 0.5:
        s = pick_subj(r)
        return cap(join(s.en, s.v('live'), 'in', c[0])) + '.', s.zh + '住在' + c[1] + '。'
    if x < 0.65:
        s = pick_subj(r)
        return (cap(join(s.en, s.do(), 'not live in', c[0])) + '.',
                s.zh + '不住在' + c[1] + '。')
    s = pick_subj(r, 'quest')
    if x < 0.82:
        return (cap(join(s.do(), s.en, 'live in', c[0])) + '?',
                s.zh + '住在' + c[1] + '吗？')
    return cap(join('where', s.do(), s.en, 'live')) + '?', s.zh + '住在哪儿？'


# ---- adjectives

NOW = ('present', '', '')
TODAY = ('present', 'today', '今天')
RIGHT_NOW = ('present', 'now', '现在')
YESTERDAY = ('past', 'yesterday', '昨天')
LAST_WEEK = ('past', 'last week', '上个星期')
TOMORROW = ('future', 'tomorrow', '明天')
# English, Chinese, the times it goes with
PERSON_ADJ = [('tired', '累', (NOW, TODAY, RIGHT_NOW, YESTERDAY)),
              ('busy', '忙', (NOW, TODAY, YESTERDAY, LAST_WEEK, TOMORROW)),
              ('happy', '高兴', (NOW, TODAY, YESTERDAY)),
              ('hungry', '饿', (NOW, RIGHT_NOW)),
              ('thirsty', '渴', (NOW, RIGHT_NOW)),
              ('tall', '高', (NOW,)), ('clever', '聪明', (NOW,)),
              ('friendly', '友好', (NOW,))]


def degree(r, allow_too=False):
    """('', '很') plain, ('very', '非常'), or ('too', '太')."""
    x = r.random()
    if x < 0.55:
        return '', '很'
    if x < 0.85 or not allow_too:
        return 'very', '非常'
    return 'too', '太'


def t_person_adj(r):
    a_en, a_zh, times = r.choice(PERSON_ADJ)
    present = [t for t in times if t[0] == 'present']
    x = r.random()
    if x < 0.6:
        s = pick_subj(r)
        d_en, d_zh = degree(r)
        tense, t_en, t_zh = r.choice(times)
        if tense == 'future':
            en = join(s.en, 'will be', d_en, a_en, t_en)
            return cap(en) + '.', s.zh + t_zh + '会' + d_zh + a_zh + '。'
        en = join(s.en, s.be(tense), d_en, a_en, t_en)
        return cap(en) + '.', s.zh + t_zh + d_zh + a_zh + '。'
    if x < 0.8:
        s = pick_subj(r)
        _, t_en, t_zh = r.choice(present)
        return (cap(join(s.en, s.be(), 'not', a_en, t_en)) + '.',
                s.zh + t_zh + '不' + a_zh + '。')
    s = pick_subj(r, 'quest')
    _, t_en, t_zh = r.choice(present)
    return cap(join(s.be(), s.en, a_en, t_en)) + '?', s.zh + t_zh + a_zh + '吗？'


WEATHER_ADJ = [('cold', '冷'), ('hot', '热'), ('warm', '暖和'), ('cool', '凉快')]
SEASONS = {'cold': ('in winter', '冬天'), 'hot': ('in summer', '夏天'),
           'warm': ('in spring', '春天'), 'cool': ('in autumn', '秋天')}
DAYS_PRESENT = [('today', '今天'), ('now', '现在')]


def t_weather(r):
    x = r.random()
    a_en, a_zh = r.choice(WEATHER_ADJ)
    if x < 0.3:
        d_en, d_zh = degree(r, allow_too=a_en in ('cold', 'hot'))
        t_en, t_zh = r.choice(DAYS_PRESENT)
        zh = t_zh + d_zh + a_zh + ('了' if d_zh == '太' else '') + '。'
        return cap(join('it is', d_en, a_en, t_en)) + '.', zh
    if x < 0.4:
        d_en, d_zh = degree(r)
        t_en, t_zh = r.choice([('yesterday', '昨天'), ('last week', '上个星期')])
        return cap(join('it was', d_en, a_en, t_en)) + '.', t_zh + d_zh + a_zh + '。'
    if x < 0.47:
        d_en, d_zh = degree(r)
        return (cap(join('it will be', d_en, a_en, 'tomorrow')) + '.',
                '明天会' + d_zh + a_zh + '。')
    if x < 0.55:
        t_en, t_zh = r.choice(DAYS_PRESENT)
        if r.random() < 0.5:
            return cap(join('it is not', a_en, t_en)) + '.', t_zh + '不' + a_zh + '。'
        return cap(join('is it', a_en, t_en)) + '?', t_zh + a_zh + '吗？'
    if x < 0.63:
        se_en, se_zh = SEASONS[a_en]
        d_en, d_zh = degree(r)
        c_en, c_zh = r.choice([('', ''), ('in Beijing', '北京'),
                               ('in Shanghai', '上海')])
        return (cap(join('it is', d_en, a_en, c_en, se_en)) + '.',
                c_zh + se_zh + d_zh + a_zh + '。')
    if x < 0.78:
        tense, t_en, t_zh = r.choice([
            ('present', 'today', '今天'), ('past', 'yesterday', '昨天'),
            ('future', 'tomorrow', '明天')])
        d_en, d_zh = degree(r)
        form = r.random()
        if tense == 'future':
            if form < 0.6:
                return (cap(join('the weather will be', d_en, 'nice', t_en)) + '.',
                        t_zh + '天气会' + d_zh + '好。')
            return (cap(join('will the weather be nice', t_en)) + '?',
                    t_zh + '天气会好吗？')
        be = 'is' if tense == 'present' else 'was'
        if form < 0.6:
            return (cap(join('the weather', be, d_en, 'nice', t_en)) + '.',
                    t_zh + '天气' + d_zh + '好。')
        if form < 0.8:
            return (cap(join('the weather', be, 'not nice', t_en)) + '.',
                    t_zh + '天气不好。')
        return (cap(join(be, 'the weather nice', t_en)) + '?',
                t_zh + '天气好吗？')
    if x < 0.85:
        t_en, t_zh = r.choice([('today', '今天'), ('tomorrow', '明天')])
        if t_en == 'today':
            return 'How is the weather today?', '今天天气怎么样？'
        return 'What will the weather be like tomorrow?', '明天天气怎么样？'
    # rain and snow
    w_en, w_zh, w_ing, w_past = r.choice([('rain', '下雨', 'raining', 'rained'),
                                          ('snow', '下雪', 'snowing', 'snowed')])
    y = r.random()
    if y < 0.2:
        return 'It is ' + w_ing + ' now.', '现在正在' + w_zh + '。'
    if y < 0.4:
        t_en, t_zh = r.choice(PAST_TIMES[:2] + PAST_TIMES[4:5])
        return cap(join('it', w_past, t_en)) + '.', t_zh + w_zh + '了。'
    if y < 0.55:
        t_en, t_zh = r.choice(FUT_TIMES[:2] + FUT_TIMES[4:5])
        return cap(join('it will', w_en, t_en)) + '.', t_zh + '会' + w_zh + '。'
    if y < 0.65:
        t_en, t_zh = r.choice(PAST_TIMES[:2] + PAST_TIMES[4:5])
        return cap(join('it did not', w_en, t_en)) + '.', t_zh + '没' + w_zh + '。'
    if y < 0.75:
        return 'Is it ' + w_ing + ' now?', '现在在' + w_zh + '吗？'
    if y < 0.85:
        t_en, t_zh = r.choice(FUT_TIMES[:2] + FUT_TIMES[4:5])
        return cap(join('will it', w_en, t_en)) + '?', t_zh + '会' + w_zh + '吗？'
    se_en, se_zh = (('in summer', '夏天') if w_en == 'rain' else
                    ('in winter', '冬天'))
    c_en, c_zh = r.choice([('', ''), ('in Beijing', '北京'),
                           ('in Shanghai', '上海')])
    return (cap(join('it often', w_en + 's', c_en, se_en)) + '.',
            c_zh + se_zh + '经常' + w_zh + '。')


# things: singular, plural, measure word, Chinese, adjectives
THINGS = [
    ('book', 'books', '本', '书', ('interesting', 'new', 'old', 'expensive',
                                  'cheap')),
    ('car', 'cars', '辆', '车', ('new', 'old', 'expensive', 'fast')),
    ('apple', 'apples', '个', '苹果', ('sweet', 'big', 'small', 'red')),
    ('room', 'rooms', '个', '房间', ('clean', 'big', 'small', 'quiet')),
    ('dog', 'dogs', '只', '狗', ('cute', 'big', 'small')),
    ('cat', 'cats', '只', '猫', ('cute', 'small')),
    ('movie', 'movies', '部', '电影', ('interesting', 'good', 'long')),
    ('park', 'parks', '个', '公园', ('big', 'beautiful', 'quiet')),
    ('shirt', 'shirts', '件', '衬衫', ('new', 'cheap', 'expensive',
                                    'beautiful')),
    ('city', 'cities', '座', '城市', ('big', 'beautiful')),
    ('song', 'songs', '首', '歌', ('nice', 'long')),
    ('computer', 'computers', '台', '电脑', ('new', 'old', 'expensive')),
    ('bag', 'bags', '个', '包', ('heavy', 'new', 'expensive', 'beautiful')),
    ('flower', 'flowers', '朵', '花', ('beautiful',)),
]
ADJ_ZH = {'interesting': '有意思', 'new': '新', 'old': '旧', 'expensive': '贵',
          'cheap': '便宜', 'fast': '快', 'sweet': '甜', 'big': '大', 'small': '小',
          'red': '红', 'clean': '干净', 'quiet': '安静', 'cute': '可爱',
          'long': '长', 'beautiful': '漂亮', 'heavy': '重'}
ADJ_ZH_FOR = {('movie', 'good'): '好看', ('song', 'nice'): '好听'}
COMPARATIVE = {'expensive': 'more expensive', 'cheap': 'cheaper',
               'big': 'bigger', 'small': 'smaller', 'new': 'newer',
               'old': 'older', 'interesting': 'more interesting',
               'sweet': 'sweeter', 'heavy': 'heavier', 'fast': 'faster',
               'long': 'longer', 'clean': 'cleaner', 'quiet': 'quieter',
               'beautiful': 'more beautiful', 'cute': 'cuter'}
TOO_OK = ('expensive', 'big', 'small', 'old', 'heavy', 'long')


def t_thing_adj(r):
    sg, pl, mw, zh, adjs = r.choice(THINGS)
    a = r.choice(adjs)
    a_zh = ADJ_ZH_FOR.get((sg, a), ADJ_ZH.get(a))
    plural = r.random() < 0.3
    near = r.random() < 0.6
    if plural:
        det_en = 'these' if near else 'those'
        det_zh = ('这些' if near else '那些') + zh
        noun, be = pl, 'are'
    else:
        det_en = 'this' if near else 'that'
        det_zh = ('这' if near else '那') + mw + zh
        noun, be = sg, 'is'
    x = r.random()
    if x < 0.6:
        d_en, d_zh = degree(r, allow_too=a in TOO_OK)
        return (cap(join(det_en, noun, be, d_en, a)) + '.',
                det_zh + d_zh + a_zh + ('了' if d_zh == '太' else '') + '。')
    if a in ('new', 'old'):     # 这辆车不是新的, not 这辆车不新
        neg_zh, q_zh = '不是' + a_zh + '的', '是' + a_zh + '的吗'
    else:
        neg_zh, q_zh = '不' + a_zh, a_zh + '吗'
    if x < 0.8:
        return cap(join(det_en, noun, be, 'not', a)) + '.', det_zh + neg_zh + '。'
    return cap(join(be, det_en, noun, a)) + '?', det_zh + q_zh + '？'


PEOPLE_CMP = [('taller', '高'), ('older', '大'), ('younger', '小')]


def t_compare(r):
    x = r.random()
    if x < 0.45:
        sg, pl, mw, zh, adjs = r.choice(THINGS)
        a = r.choice([a for a in adjs if a in COMPARATIVE])
        a_zh = ADJ_ZH_FOR.get((sg, a), ADJ_ZH[a])
        if r.random() < 0.8:
            return (cap(join('this', sg, 'is', COMPARATIVE[a], 'than that one')) + '.',
                    '这' + mw + zh + '比那' + mw + a_zh + '。')
        return (cap(join('is this', sg, COMPARATIVE[a], 'than that one')) + '?',
                '这' + mw + zh + '比那' + mw + a_zh + '吗？')
    if x < 0.85:
        pool = NAME_SUBJ + [s for s in MY_FAMILY if not s.plural and
                            s.en not in ('our teacher', 'my friend')]
        a, b = r.sample(pool, 2)
        c_en, c_zh = r.choice(PEOPLE_CMP)
        if r.random() < 0.8:
            return cap(join(a.en, 'is', c_en, 'than', b.en)) + '.', a.zh + '比' + b.zh + c_zh + '。'
        return cap(join('is', a.en, c_en, 'than', b.en)) + '?', a.zh + '比' + b.zh + c_zh + '吗？'
    c_en, c_zh = r.choice([('colder', '冷'), ('hotter', '热'), ('warmer', '暖和')])
    if r.random() < 0.6:
        return cap(join('today is', c_en, 'than yesterday')) + '.', '今天比昨天' + c_zh + '。'
    return cap(join('Beijing is', c_en, 'than Shanghai today')) + '.', '今天北京比上海' + c_zh + '。'


# ---- numbers and measure words

class Noun(object):
    def __init__(self, sg, pl, mw, zh, most, locs=(), tags=''):
        self.sg, self.pl, self.mw, self.zh = sg, pl, mw, zh
        self.most, self.locs, self.tags = most, locs, tags.split()

    def en_n(self, n):
        return article(self.sg) if n == 1 else en_num(n) + ' ' + self.pl

    def zh_n(self, n):
        return zh_num(n, measure=True) + self.mw + self.zh


NOUNS = [
    Noun('book', 'books', '本', '书', 10, ('table', 'room', 'bag', 'box'),
         'have buy give hneg'),
    Noun('apple', 'apples', '个', '苹果', 10, ('table', 'fridge', 'box'),
         'have buy give food hneg'),
    Noun('orange', 'oranges', '个', '橙子', 10, ('table', 'fridge'),
         'buy give food'),
    Noun('banana', 'bananas', '根', '香蕉', 10, ('table',), 'buy give food'),
    Noun('egg', 'eggs', '个', '鸡蛋', 10, ('fridge',), 'buy food'),
    Noun('pen', 'pens', '支', '笔', 10, ('table', 'bag', 'box'),
         'have buy give hneg'),
    Noun('cup of tea', 'cups of tea', '杯', '茶', 4, ('table',), 'give food'),
    Noun('cup of coffee', 'cups of coffee', '杯', '咖啡', 3, ('table',),
         'give food'),
    Noun('bottle of water', 'bottles of water', '瓶', '水', 6,
         ('table', 'fridge', 'bag'), 'buy give food'),
    Noun('bowl of noodles', 'bowls of noodles', '碗', '面条', 3, (),
         'give food'),
    Noun('cat', 'cats', '只', '猫', 3, ('room', 'garden'), 'have hneg one'),
    Noun('dog', 'dogs', '只', '狗', 3, ('garden', 'park'), 'have hneg one'),
    Noun('bird', 'birds', '只', '鸟', 6, ('tree', 'garden')),
    Noun('car', 'cars', '辆', '车', 2, (), 'have adult one hneg'),
    Noun('bike', 'bikes', '辆', '自行车', 3, (), 'have buy one hneg'),
    Noun('computer', 'computers', '台', '电脑', 3, ('room', 'classroom'),
         'have buy one hneg'),
    Noun('chair', 'chairs', '把', '椅子', 10, ('room', 'classroom'), 'buy'),
    Noun('umbrella', 'umbrellas', '把', '伞', 3, ('bag',), 'have buy one hneg'),
    Noun('bag', 'bags', '个', '包', 3, (), 'have buy'),
    Noun('shirt', 'shirts', '件', '衬衫', 5, (), 'have buy'),
    Noun('ticket', 'tickets', '张', '票', 4, ('bag',), 'have buy hneg'),
    Noun('photo', 'photos', '张', '照片', 6, ('table',)),
    Noun('tree', 'trees', '棵', '树', 10, ('garden', 'park')),
    Noun('flower', 'flowers', '朵', '花', 10, ('garden', 'table'), 'buy'),
    Noun('student', 'students', '个', '学生', 10, ('classroom',)),
    Noun('child', 'children', '个', '孩子', 6, ('park', 'garden'),
         'have adult'),
    Noun('friend', 'friends', '个', '朋友', 5, (), 'have'),
    Noun('fish', 'fish', '条', '鱼', 5, (), 'buy food'),
    Noun('key', 'keys', '把', '钥匙', 3, ('bag', 'table'), 'have'),
]

LOCS = {'table': ('on the table', '桌子上'), 'room': ('in the room', '房间里'),
        'classroom': ('in the classroom', '教室里'),
        'garden': ('in the garden', '花园里'), 'park': ('in the park', '公园里'),
        'tree': ('in the tree', '树上'), 'bag': ('in the bag', '包里'),
        'fridge': ('in the fridge', '冰箱里'), 'box': ('in the box', '盒子里')}


def nouns(tag):
    return [n for n in NOUNS if tag in n.tags]


def count(r, noun):
    return r.randint(1, noun.most)


def t_have(r):
    x = r.random()
    # "does not have any shirts" says little; negate and ask about a few
    n = r.choice(nouns('have') if x < 0.5 or x >= 0.85 else nouns('hneg'))
    kind = 'grown' if 'adult' in n.tags else None
    if x < 0.5:
        s = pick_subj(r, kind=kind)
        k = r.randint(1, 3 if n.sg == 'child' else n.most)
        return (cap(join(s.en, s.v('have'), n.en_n(k))) + '.',
                s.zh + '有' + n.zh_n(k) + '。')
    if x < 0.7:
        s = pick_subj(r, kind=kind)
        o = article(n.sg) if 'one' in n.tags else 'any ' + n.pl
        return (cap(join(s.en, s.do(), 'not have', o)) + '.',
                s.zh + '没有' + n.zh + '。')
    s = pick_subj(r, 'quest', kind=kind)
    if x < 0.85:
        o = article(n.sg) if 'one' in n.tags else 'any ' + n.pl
        return cap(join(s.do(), s.en, 'have', o)) + '?', s.zh + '有' + n.zh + '吗？'
    return (cap(join('how many', n.pl, s.do(), s.en, 'have')) + '?',
            s.zh + '有几' + n.mw + n.zh + '？')


def t_buy(r):
    n = r.choice(nouns('buy'))
    k = count(r, n)
    x = r.random()
    if x < 0.55:
        s = pick_subj(r)
        t_en, t_zh = r.choice(PAST_TIMES)
        pl_en, pl_zh = ('', '')
        if 'food' in n.tags and r.random() < 0.4:
            pl_en, pl_zh = 'at the supermarket', '在超市'
        en = join(s.en, 'bought', n.en_n(k), pl_en, t_en)
        return cap(en) + '.', s.zh + t_zh + pl_zh + '买了' + n.zh_n(k) + '。'
    if x < 0.8:
        s = pick_subj(r)
        en = join(s.en, s.v('want'), 'to buy', n.en_n(k))
        return cap(en) + '.', s.zh + '想买' + n.zh_n(k) + '。'
    if x < 0.9:
        s = pick_subj(r, 'quest')
        t_en, t_zh = r.choice(PAST_TIMES[:1] + PAST_TIMES[4:])
        return cap(join('what did', s.en, 'buy', t_en)) + '?', s.zh + t_zh + '买了什么？'
    s = pick_subj(r)
    t_en, t_zh = r.choice(FUT_TIMES[:1] + FUT_TIMES[4:])
    en = join(s.en, 'will buy', n.en_n(k), t_en)
    return cap(en) + '.', s.zh + t_zh + '会买' + n.zh_n(k) + '。'


def t_there(r):
    n = r.choice([n for n in NOUNS if n.locs])
    l_en, l_zh = LOCS[r.choice(n.locs)]
    x = r.random()
    if x < 0.6:
        k = count(r, n)
        be = 'is' if k == 1 else 'are'
        return (cap(join('there', be, n.en_n(k), l_en)) + '.',
                l_zh + '有' + n.zh_n(k) + '。')
    if x < 0.75:
        return cap(join('there are no', n.pl, l_en)) + '.', l_zh + '没有' + n.zh + '。'
    if x < 0.87:
        return cap(join('are there any', n.pl, l_en)) + '?', l_zh + '有' + n.zh + '吗？'
    return (cap(join('how many', n.pl, 'are there', l_en)) + '?',
            l_zh + '有几' + n.mw + n.zh + '？')


def t_give(r):
    n = r.choice(nouns('give'))
    k = r.randint(1, min(3, n.most))
    if r.random() < 0.7:
        return 'Please give me ' + n.en_n(k) + '.', '请给我' + n.zh_n(k) + '。'
    k = 1 if n.most <= 3 else r.randint(1, 2)
    s = pick_subj(r, exclude=('I',))
    return (cap(join(s.en, 'gave me', n.en_n(k), 'yesterday')) + '.',
            s.zh + '昨天给了我' + n.zh_n(k) + '。')


# ---- jobs, names, ages, owners

JOBS = [('teacher', 'teachers', '老师', 'school'),
        ('doctor', 'doctors', '医生', 'hospital'),
        ('nurse', 'nurses', '护士', 'hospital'),
        ('student', 'students', '学生', None),
        ('driver', 'drivers', '司机', None),
        ('cook', 'cooks', '厨师', 'restaurant'),
        ('engineer', 'engineers', '工程师', 'factory'),
        ('worker', 'workers', '工人', 'factory'),
        ('police officer', 'police officers', '警察', None),
        ('farmer', 'farmers', '农民', None)]
WORKPLACES = {'school': ('at a school', '在学校'),
              'hospital': ('in a hospital', '在医院'),
              'restaurant': ('in a restaurant', '在饭馆'),
              'factory': ('in a factory', '在工厂'),
              'bank': ('at a bank', '在银行'),
              'shop': ('in a shop', '在商店'),
              'post office': ('at the post office', '在邮局')}


def t_job(r):
    j_sg, j_pl, j_zh, wp = r.choice(JOBS)
    x = r.random()
    if x < 0.3:
        s = pick_subj(r, kind='grown' if j_sg != 'student' else 'kid',
                      exclude=('my friend', 'the students', 'our teacher'))
        o = j_pl if s.plural else article(j_sg)
        return cap(join(s.en, s.be(), o)) + '.', s.zh + '是' + j_zh + '。'
    if x < 0.4:
        s = pick_subj(r, exclude=('the students', 'our teacher'))
        o = j_pl if s.plural else article(j_sg)
        return cap(join(s.en, s.be(), 'not', o)) + '.', s.zh + '不是' + j_zh + '。'
    if x < 0.52:
        s = pick_subj(r, 'quest', exclude=('the students', 'our teacher'))
        o = j_pl if s.plural else article(j_sg)
        return cap(join(s.be(), s.en, o)) + '?', s.zh + '是' + j_zh + '吗？'
    if x < 0.65:
        if j_sg == 'student':
            return None
        s = pick_subj(r, kind='kid', singular=True)
        return (cap(join(s.en, s.v('want'), 'to be', article(j_sg))) + '.',
                s.zh + '想当' + j_zh + '。')
    if x < 0.72:
        s = pick_subj(r, 'quest', kind='grown')
        return cap(join('what', s.do(), s.en, 'do')) + '?', s.zh + '做什么工作？'
    w = WORKPLACES[wp] if wp and r.random() < 0.7 else WORKPLACES[
        r.choice(list(WORKPLACES))]
    if x < 0.85:
        s = pick_subj(r, kind='grown')
        return cap(join(s.en, s.v('work'), w[0])) + '.', s.zh + w[1] + '工作。'
    s = pick_subj(r, 'quest', kind='grown')
    if x < 0.92:
        return cap(join(s.do(), s.en, 'work', w[0])) + '?', s.zh + w[1] + '工作吗？'
    return cap(join('where', s.do(), s.en, 'work')) + '?', s.zh + '在哪儿工作？'


OWNED = [('book', '书'), ('pen', '笔'), ('bag', '包'), ('umbrella', '伞'),
         ('car', '车'), ('bike', '自行车'), ('computer', '电脑'), ('cat', '猫'),
         ('dog', '狗'), ('room', '房间'), ('phone', '手机'), ('cup', '杯子'),
         ('key', '钥匙'), ('ticket', '票'), ('shirt', '衬衫')]
OWNERS = [('my', '我的'), ('your', '你的'), ('his', '他的'), ('her', '她的'),
          ('our', '我们的'), ('their', '他们的'), ("Tom's", '汤姆的'),
          ("Mary's", '玛丽的'), ("my father's", '我爸爸的'),
          ("my sister's", '我姐姐的')]
RELATIVES = [('father', '爸爸'), ('mother', '妈妈'), ('brother', '哥哥'),
             ('sister', '姐姐'), ('grandfather', '爷爷'),
             ('grandmother', '奶奶'), ('friend', '的朋友'),
             ('teacher', '的老师')]


def t_this_is(r):
    x = r.random()
    near = r.random() < 0.6
    d_en, d_zh = ('this', '这') if near else ('that', '那')
    if x < 0.35:
        o_en, o_zh = r.choice(OWNED)
        w_en, w_zh = r.choice(OWNERS)
        y = r.random()
        if y < 0.5:
            return cap(join(d_en, 'is', w_en, o_en)) + '.', d_zh + '是' + w_zh + o_zh + '。'
        if y < 0.75:
            return (cap(join(d_en, 'is not', w_en, o_en)) + '.',
                    d_zh + '不是' + w_zh + o_zh + '。')
        return (cap(join('is', d_en, 'your', o_en)) + '?',
                d_zh + '是你的' + o_zh + '吗？')
    if x < 0.45:
        o_en, o_zh = r.choice(OWNED)
        return cap(join('whose', o_en, 'is', d_en)) + '?', d_zh + '是谁的' + o_zh + '？'
    rel_en, rel_zh = r.choice(RELATIVES)
    if x < 0.7:
        p_en, p_zh = r.choice([('my', '我'), ('his', '他'), ('her', '她'),
                               ('our', '我们')])
        if rel_en == 'teacher' and p_zh == '我们':
            rel_zh = '老师'
        return cap(join(d_en, 'is', p_en, rel_en)) + '.', d_zh + '是' + p_zh + rel_zh + '。'
    if x < 0.85:
        return cap(join('is', d_en, 'your', rel_en)) + '?', d_zh + '是你' + rel_zh + '吗？'
    n_en, n_zh, _ = r.choice(NAMES)
    if rel_en in ('friend', 'teacher', 'brother', 'sister'):
        return (cap(join(d_en, 'is my', rel_en, n_en)) + '.',
                d_zh + '是我' + rel_zh + n_zh + '。')
    return cap(join(d_en, 'is', n_en)) + '.', d_zh + '是' + n_zh + '。'


def t_name(r):
    x = r.random()
    n_en, n_zh, g = r.choice(NAMES)
    if x < 0.45:
        p = r.choice(['I', g])
        return (cap(join(PRON[p].poss, 'name is', n_en)) + '.',
                PRON[p].zh + '叫' + n_zh + '。')
    if x < 0.7:
        p = r.choice(['you', 'he', 'she'])
        return (cap(join('what is', PRON[p].poss, 'name')) + '?',
                PRON[p].zh + '叫什么名字？')
    if x < 0.85:
        p = r.choice(['you', g])
        return cap(join('is', PRON[p].poss, 'name', n_en)) + '?', PRON[p].zh + '叫' + n_zh + '吗？'
    return (cap(join(PRON[g].poss, 'name is not', n_en)) + '.',
            PRON[g].zh + '不叫' + n_zh + '。')


AGES = {'my father': (30, 40, 50), 'my mother': (30, 40, 50),
        'my grandfather': (60, 70, 80), 'my grandmother': (60, 70, 80),
        'my brother': (12, 15, 18, 20), 'my sister': (12, 15, 18, 20),
        'his father': (30, 40, 50), 'her mother': (30, 40, 50)}


def t_age(r):
    if r.random() < 0.75:
        pool = [s for s in STATE_SUBJ if s.en in AGES or
                s in NAME_SUBJ or s.en == 'I']
        s = r.choice(pool)
        a = r.choice(AGES.get(s.en, tuple(range(6, 13))))
        return (cap(join(s.en, s.be(), en_num(a), 'years old')) + '.',
                s.zh + zh_num(a) + '岁了。')
    s = pick_subj(r, 'quest')
    return cap(join('how old', s.be(), s.en)) + '?', s.zh + '多大了？'


# ---- clock times

CLOCK_ACTS = [('get', 'up', '起床', (6, 7, 8), ''),
              ('go', 'to bed', '睡觉', (9, 10, 11), ''),
              ('have', 'breakfast', '吃早饭', (7, 8), ''),
              ('have', 'lunch', '吃午饭', (11, 12), ''),
              ('have', 'dinner', '吃晚饭', (6, 7), ''),
              ('go', 'to school', '去学校', (7, 8), 'kid'),
              ('go', 'to work', '去上班', (7, 8, 9), 'adult'),
              ('come', 'home', '回家', (5, 6), '')]


def t_clock(r):
    v, o, zh, hours, kind = r.choice(CLOCK_ACTS)
    h = r.choice(hours)
    half = r.random() < 0.3
    h_en = 'at ' + ('half past ' if half else '') + en_num(h)
    h_zh = zh_num(h, measure=True) + '点' + ('半' if half else '')
    x = r.random()
    if x < 0.6:
        s = pick_subj(r, kind=kind or None)
        adv_en = adv_zh = t_en = t_zh = ''
        y = r.random()
        if y < 0.3:
            adv_en, adv_zh = 'usually', '通常'
        elif y < 0.7:
            t_en, t_zh = 'every day', '每天'
        en = join(s.en, adv_en, conj(v, 's' if s.sg3 else 'base'), o, h_en, t_en)
        return cap(en) + '.', s.zh + t_zh + adv_zh + h_zh + zh + '。'
    s = pick_subj(r, 'quest', kind=kind or None)
    if x < 0.8:
        return cap(join('what time', s.do(), s.en, v, o)) + '?', s.zh + '几点' + zh + '？'
    return (cap(join(s.do(), s.en, v, o, h_en, 'every day')) + '?',
            s.zh + '每天' + h_zh + zh + '吗？')


# ---- two clauses

def two_people(r, kind=None):
    """Two different subjects; the second is not a pronoun."""
    a = pick_subj(r, kind=kind)
    while True:
        b = pick_subj(r, kind=kind, named=True, exclude=(a.en,))
        if not set(a.en.split()) & set(b.en.split()) - {'my', 'the'}:
            return a, b


def two_liked(r, a, b):
    """Two different things of one group, for a and b to like."""
    group = r.choice(['food', 'food', 'drink', 'pet', 'season', 'city'])
    cand = [n for n in like_nouns(a) if n[2] == group and n in like_nouns(b)]
    return r.sample(cand, 2)


def t_but(r):
    x = r.random()
    if x < 0.3:
        a, b = two_people(r)
        n1, n2 = two_liked(r, a, b)
        return (cap(join(a.en, a.v('like'), n1[0] + ',', 'but', b.en,
                         b.v('like'), n2[0])) + '.',
                a.zh + '喜欢' + n1[1] + '，但是' + b.zh + '喜欢' + n2[1] + '。')
    if x < 0.55:
        a = pick_subj(r, pron=True)
        p = PRON[a.pron]
        n1, n2 = two_liked(r, a, a)
        return (cap(join(a.en, a.v('like'), n1[0] + ',', 'but', p.en, p.do(),
                         'not like', n2[0])) + '.',
                a.zh + '喜欢' + n1[1] + '，但是' + p.zh + '不喜欢' + n2[1] + '。')
    if x < 0.75:
        vp = pick_vp(r, need='skill')
        a, b = two_people(r, 'adult' if vp.has('adult') else None)
        return (cap(join(a.en, 'can', vp.en('base', 'can') + ',', 'but', b.en,
                         'cannot')) + '.',
                a.zh + '会' + vp.zh + '，但是' + b.zh + '不会。')
    if x < 0.9:
        vp1, vp2 = r.sample([v for v in ACTIVITIES if v.has('skill')], 2)
        if vp1.has('adult') or vp2.has('adult'):
            a = pick_subj(r, kind='adult', pron=True)
        else:
            a = pick_subj(r, pron=True)
        p = PRON[a.pron]
        return (cap(join(a.en, 'can', vp1.en('base', 'can') + ',', 'but', p.en,
                         'cannot', vp2.en('base', 'can'))) + '.',
                a.zh + '会' + vp1.zh + '，但是' + p.zh + '不会' + vp2.zh + '。')
    a = pick_subj(r)
    d = r.choice([d for d in DESTS if not d.city])
    w_en, w_zh = r.choice([('it rained', '下雨了'), ('it snowed', '下雪了')])
    return (cap(join(a.en, 'wanted to go to', d.en + ',', 'but', w_en)) + '.',
            a.zh + '想去' + d.zh + '，但是' + w_zh + '。')


def t_so(r):
    feel, f_zh = r.choice([('hungry', '饿'), ('thirsty', '渴'),
                           ('tired', '累')])
    a = pick_subj(r, pron=True)
    p = PRON[a.pron]
    ctx = 'wantneg' if a.plural else 'want'
    if feel == 'hungry':
        vp = r.choice([v for v in ACTIVITIES if v.verb == 'eat'])
        w_en, w_zh = vp.en('base', ctx), vp.zh_for(ctx)
    elif feel == 'thirsty':
        vp = r.choice([v for v in ACTIVITIES if v.verb == 'drink' and not (
            v.has('adult') and a.kind == 'child')] + [
            VP('drink', 'water', '喝水', spec='a glass of water',
               zh_spec='喝一杯水', gen_in=FOOD_GEN)])
        w_en, w_zh = vp.en('base', ctx), vp.zh_for(ctx)
    else:
        w_en, w_zh = r.choice([('rest', '休息'), ('go to bed', '睡觉'),
                               ('go home', '回家')])
    return (cap(join(a.en, a.be(), feel + ',', 'so', p.en, p.v('want'), 'to',
                     w_en)) + '.',
            a.zh + '很' + f_zh + '，所以' + p.zh + '想' + w_zh + '。')


IF_BAD = [('it rains', '下雨'), ('it snows', '下雪'), ('it is cold', '很冷')]
IF_GOOD = [('the weather is nice', '天气好')]
MAIN_BAD = [('stay at home', '待在家里'), ('not go to the park', '不去公园了'),
            ('watch TV at home', '在家看电视'), ('not play football', '不踢足球了'),
            ('play chess at home', '在家下棋'), ('read books at home', '在家看书')]
MAIN_GOOD = [('go to the park', '去公园'), ('play football', '去踢足球'),
             ('go swimming', '去游泳'), ('go to the beach', '去海边'),
             ('fly kites in the park', '去公园放风筝'), ('go fishing', '去钓鱼')]


def t_if(r):
    s = pick_subj(r)
    if r.random() < 0.6:
        c_en, c_zh = r.choice(IF_BAD)
        m_en, m_zh = r.choice(MAIN_BAD)
    else:
        c_en, c_zh = r.choice(IF_GOOD)
        m_en, m_zh = r.choice(MAIN_GOOD)
    return (cap(join('if', c_en, 'tomorrow,', s.en, 'will', m_en)) + '.',
            '如果明天' + c_zh + '，' + s.zh + '就' + m_zh + '。')


# ---- wh-questions about activities

def t_wh(r):
    s = pick_subj(r, 'quest')
    x = r.random()
    if x < 0.25:
        v_en, v_zh = r.choice([('eat', '吃'), ('drink', '喝')])
        return cap(join('what', s.do(), s.en, 'want to', v_en)) + '?', s.zh + '想' + v_zh + '什么？'
    if x < 0.45:
        v_en, v_zh = r.choice([('eat', '吃'), ('drink', '喝'), ('do', '做')])
        return cap(join('what', s.do(), s.en, 'like to', v_en)) + '?', s.zh + '喜欢' + v_zh + '什么？'
    if x < 0.6:
        return cap(join('what', s.be(), s.en, 'doing now')) + '?', s.zh + '现在在做什么？'
    if x < 0.8:
        t_en, t_zh = r.choice(PAST_TIMES)
        return cap(join('what did', s.en, 'do', t_en)) + '?', s.zh + t_zh + '做了什么？'
    if x < 0.92:
        t_en, t_zh = r.choice(PAST_TIMES[:2] + PAST_TIMES[4:])
        return cap(join('where did', s.en, 'go', t_en)) + '?', s.zh + t_zh + '去哪儿了？'
    t_en, t_zh = r.choice(FUT_TIMES[:1] + FUT_TIMES[4:])
    return cap(join('where will', s.en, 'go', t_en)) + '?', s.zh + t_zh + '会去哪儿？'


TEMPLATES = [
    (t_habit, 12), (t_habit_neg, 4), (t_habit_q, 5),
    (t_past, 11), (t_past_neg, 4), (t_past_q, 4),
    (t_prog, 5), (t_prog_q, 2.5),
    (t_fut, 6), (t_fut_neg, 2), (t_fut_q, 2.5),
    (t_like, 7), (t_like_neg, 3), (t_like_q, 3),
    (t_want, 5), (t_want_neg, 2), (t_want_q, 2.5),
    (t_can, 6), (t_lets, 1.5),
    (t_go, 9), (t_go_want, 3), (t_go_how, 2),
    (t_be_at, 4), (t_live, 1.5),
    (t_person_adj, 5), (t_weather, 5), (t_thing_adj, 5), (t_compare, 3),
    (t_have, 4), (t_buy, 4), (t_there, 4), (t_give, 1.2),
    (t_job, 4), (t_this_is, 3), (t_name, 1), (t_age, 1.5), (t_clock, 3),
    (t_but, 3.5), (t_so, 1.5), (t_if, 2), (t_wh, 3),
]


# ---------------------------------------------------------------- driver

def generate(seed, total):
    """`total` distinct pairs, in generation order."""
    r = random.Random(seed)
    funcs = [t[0] for t in TEMPLATES]
    weights = [t[1] for t in TEMPLATES]
    pairs, seen = [], {}
    tries = 0
    while len(pairs) < total:
        tries += 1
        if tries > total * 200:
            sys.exit('make_sample: the grammar cannot make %d distinct pairs'
                     % total)
        f = r.choices(funcs, weights)[0]
        pair = f(r)
        if pair is None:
            continue
        en, zh = pair
        if not MIN_WORDS <= len(en.split()) <= MAX_WORDS:
            continue
        if en in seen:
            if seen[en] != zh:
                sys.exit('make_sample: two translations of %r: %r, %r'
                         % (en, seen[en], zh))
            continue
        seen[en] = zh
        pairs.append((en, zh))
    return pairs


def file_text(lines):
    return ''.join(line + '\n' for line in lines)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--out', default=os.path.join(here, 'sample'),
                    help='output directory (default: data/sample)')
    ap.add_argument('--train', type=int, default=N_TRAIN)
    ap.add_argument('--dev', type=int, default=N_DEV)
    ap.add_argument('--seed', type=int, default=SEED)
    ap.add_argument('--check', action='store_true',
                    help='write nothing; exit 1 if the files in --out differ '
                    'from what this script makes')
    args = ap.parse_args()

    pairs = generate(args.seed, args.train + args.dev)
    random.Random(args.seed + 1).shuffle(pairs)
    dev, train = pairs[:args.dev], pairs[args.dev:]
    assert not set(e for e, _ in dev) & set(e for e, _ in train)

    files = {}
    for name, part in (('train', train), ('dev', dev)):
        files[name + '.en'] = file_text(e for e, _ in part)
        files[name + '.zh'] = file_text(z for _, z in part)

    if args.check:
        stale = []
        for name, text in sorted(files.items()):
            path = os.path.join(args.out, name)
            try:
                with open(path, encoding='utf-8', newline='') as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                stale.append(path)
        for path in stale:
            print('make_sample: %s differs from the generator' % path)
        sys.exit(1 if stale else 0)

    os.makedirs(args.out, exist_ok=True)
    for name, text in sorted(files.items()):
        with open(os.path.join(args.out, name), 'w', encoding='utf-8',
                  newline='\n') as f:
            f.write(text)
    print('make_sample: %d train + %d dev pairs in %s'
          % (len(train), len(dev), args.out))


if __name__ == '__main__':
    main()
