"""Writes, with cantools' DBC writer, a database whose names are longer than the 32 characters DBC
names allow (a message, a signal with a comment and a value table), for canlab's test of
SystemMessageLongSymbol and SystemSignalLongSymbol. (Multiplexing is left out: cantools writes a
long-named switch into SG_MUL_VAL_ by its long name and then cannot read the file back.)

    long_names_dbc.py <out.dbc>
"""

import sys

import cantools
from cantools.database import Message, Signal
from cantools.database.conversion import BaseConversion

db = cantools.database.Database()
db.messages.append(
    Message(
        0x123,
        'Brake_Disc_Temperatures_Of_All_Four_Wheels',
        8,
        [
            Signal('Page', start=0, length=8),
            Signal(
                'Temperature_Of_The_Left_Front_Brake_Disc_Rotor',
                start=8,
                length=16,
                conversion=BaseConversion.factory(scale=0.1, offset=-40, choices={0: 'Cold'}),
                comment='measured at the rotor',
            ),
            Signal('Short', start=24, length=8),
        ],
    )
)
db.refresh()
with open(sys.argv[1], 'w', encoding='utf-8') as f:
    f.write(db.as_dbc_string())
